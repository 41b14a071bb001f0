"""The registry of training methods: one `MethodEntry` per method (`methods/entry.py`), StraTune's
here and each baseline's in its own module, and the lookups every reader uses.

`iterate_method(spec, config, task, llm)` yields (state, events) after each step, as
`round/run.iterate` does for StraTune; the shell (train, replay, resume, grid) drives every
method through it. The command line's options, `compare`'s labels, `plan`'s estimates, the
manifest's prompt version and package versions all read the entry, keyed by `Method`.

Adding a method: its settings record in `records/method_spec.py`, its module with `iterate`,
`estimate` and `ENTRY` (its own events, with their views, in `<m>_events.py`), and one line
in `methods/baselines.BASELINES` (docs/design.md, "Extending").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Union

from stratune_core.config.knobs import Config
from stratune_core.methods.baselines import BASELINES, generator_entry
from stratune_core.methods.entry import MethodEntry, Step
from stratune_core.methods.event_view import EventView
from stratune_core.prompts.templates import PROMPT_VERSION
from stratune_core.records.llm import LLM
from stratune_core.records.method_events import STEP_EVENTS as SHARED_STEPS
from stratune_core.records.method_spec import Method, MethodSpec, StraTuneMethod, generator_of
from stratune_core.records.task import Task
from stratune_core.round.run import iterate
from stratune_core.state.events import EVENT_TYPES


def _stratune(spec: StraTuneMethod, config: Config, task: Task, llm: LLM) -> Iterator[Step]:
    return iterate(config, task, llm, spec.generator)


STRATUNE = MethodEntry(
    method=Method.STRATUNE, spec=StraTuneMethod, label="StraTune", iterate=_stratune,
    prompt_version=PROMPT_VERSION, config_fields=None,
)

# StraTune, then the baselines in the paper's order (Table 2's rows), which compare's tables keep
METHODS: Mapping[Method, MethodEntry] = {e.method: e for e in (STRATUNE, *BASELINES)}

# Each method's own events, keyed by their class, with how the shell shows them
EVENT_VIEWS: Mapping[type, EventView] = {v.event: v for e in METHODS.values() for v in e.events}
# Every event a trace may hold: StraTune's and the baselines' shared ones, then each method's
# own; the trace converter tags and reads this union (a line's tag is its class name)
TRACE_EVENT_TYPES: tuple[type, ...] = (*EVENT_TYPES, *EVENT_VIEWS)
TraceEvent: Any = Union[TRACE_EVENT_TYPES]  # noqa: UP007  (built from a tuple at import)
# The events that close one step of a baseline's run, which the progress display counts
STEP_EVENTS: tuple[type, ...] = (*SHARED_STEPS, *(t for t, v in EVENT_VIEWS.items() if v.step))


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
    if (generator := generator_of(spec)) is not None:
        found += generator_entry(generator).packages
    return found


def hybrid_label(spec: MethodSpec) -> str | None:
    """Compare's label of a hybrid run (Table 4), None for any other run."""
    if (generator := generator_of(spec)) is not None:
        return generator_entry(generator).hybrid
    return None
