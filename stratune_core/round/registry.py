"""The registry of training methods: one `MethodEntry` per method (`methods/entry.py`), StraTune's
here and each baseline's in its own module, and the lookups every reader uses.

`iterate_method(spec, config, task, llm)` yields (state, events) after each step, as
`round/run.iterate` does for StraTune; the shell (train, replay, resume, grid) drives every
method through it. The command line's options, `compare`'s labels, `plan`'s estimates, the
manifest's prompt version and package versions all read the entry, keyed by `Method`.

Adding a method: its settings record in `records/method_spec.py`, its module with `iterate`,
`estimate` and `ENTRY`, and one line in `METHODS` below (docs/design.md, "Extending").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from stratune_core.config.knobs import Config
from stratune_core.methods import gepa_run, iter_cot, skillopt, textgrad, trace2skill
from stratune_core.methods.entry import MethodEntry, Step
from stratune_core.prompts.templates import PROMPT_VERSION
from stratune_core.records.llm import LLM
from stratune_core.records.method_spec import Method, MethodSpec, StraTuneMethod
from stratune_core.records.task import Task
from stratune_core.round.run import iterate


def _stratune(spec: StraTuneMethod, config: Config, task: Task, llm: LLM) -> Iterator[Step]:
    return iterate(config, task, llm, spec.generator)


STRATUNE = MethodEntry(
    method=Method.STRATUNE, spec=StraTuneMethod, label="StraTune", iterate=_stratune,
    prompt_version=PROMPT_VERSION, config_fields=None,
)

# StraTune, then the baselines in the paper's order (Table 2's rows), which compare's tables keep
METHODS: Mapping[Method, MethodEntry] = {e.method: e for e in (
    STRATUNE, gepa_run.ENTRY, textgrad.ENTRY, skillopt.ENTRY, trace2skill.ENTRY, iter_cot.ENTRY,
)}


def entry_of(spec: MethodSpec) -> MethodEntry:
    return METHODS[spec.method]


def iterate_method(spec: MethodSpec, config: Config, task: Task, llm: LLM) -> Iterator[Step]:
    """The run of `spec`'s method; the first yield opens the run, the last closes it with
    `RunFinished`. Every yielded state answers `methods/entry.RunState`."""
    return entry_of(spec).iterate(spec, config, task, llm)


def prompt_version_of(spec: MethodSpec) -> str:
    """The version of the prompts `spec`'s run builds: a hybrid runs StraTune's rounds, so it
    takes StraTune's version."""
    return entry_of(spec).prompt_version


def packages_of(spec: MethodSpec) -> tuple[str, ...]:
    """The third-party packages a run's steps go through, beyond StraTune's own dependencies: a
    run records their versions, and `replay` names one that moved (a hybrid runs its generator's
    method's package)."""
    found = entry_of(spec).packages
    if isinstance(spec, StraTuneMethod) and spec.generator is not None:
        found += METHODS[Method(spec.generator.value)].packages
    return found


def hybrid_label(spec: MethodSpec) -> str | None:
    """Compare's label of a hybrid run (Table 4), None for any other run."""
    if isinstance(spec, StraTuneMethod) and spec.generator is not None:
        return METHODS[Method(spec.generator.value)].hybrid
    return None
