"""Which method trains the skill, and that method's settings (paper App. "Baseline Settings").

A method is a tagged union of frozen records, one per method, each with the paper's values as
defaults. The manifest stores the record; a manifest without one is a StraTune run, so every
trace recorded before the baselines existed still replays to its digest.
"""

from __future__ import annotations

import enum
from typing import ClassVar

import attrs
from attrs import field, frozen

from stratune_core.records.errors import ConfigError


class Method(enum.StrEnum):
    STRATUNE = "stratune"
    TEXTGRAD = "textgrad"
    ITER_COT = "iter-cot"
    TRACE2SKILL = "trace2skill"
    SKILLOPT = "skillopt"
    GEPA = "gepa"


def _positive(_inst: object, attribute: attrs.Attribute, value: int) -> None:
    if value < 1:
        raise ConfigError(f"method {attribute.name}: must be at least 1, got {value}",
                          field=attribute.name)


def _fraction(_inst: object, attribute: attrs.Attribute, value: float) -> None:
    if not 0.0 < value < 1.0:
        raise ConfigError(f"method {attribute.name}: must lie strictly between 0 and 1, got "
                          f"{value}", field=attribute.name)


class Generator(enum.StrEnum):
    """Table 4's hybrids: whose candidate generation replaces StraTune's in each round."""

    GEPA = "gepa"  # GEPA's reflective prompt mutation on a minibatch of 3 of the batch
    SKILLOPT = "skillopt"  # one SkillOpt step's edits on the batch


@frozen(kw_only=True)
class StraTuneMethod:
    """Adaptive operator selection with candidate evaluation: the settings live in `Config`.
    `generator`: a hybrid of Table 4 (None: StraTune's own candidate generation)."""

    method: ClassVar[Method] = Method.STRATUNE
    generator: Generator | None = field(default=None, converter=attrs.converters.optional(Generator))


@frozen(kw_only=True)
class TextGradMethod:
    """Textual gradients on minibatches of 3, each update kept only if the internal validation
    score does not drop; train split 80/20 for updates and validation."""

    method: ClassVar[Method] = Method.TEXTGRAD
    minibatch: int = field(default=3, validator=_positive)
    validation_frac: float = field(default=0.2, validator=_fraction)


# Exemplars appended by Iter-CoT per task (paper App. "Baseline Settings"); other tasks take
# ITER_COT_DEFAULT_EXEMPLARS, the count of the short-answer tasks.
ITER_COT_EXEMPLARS = {"docvqa": 8, "livemath": 8, "mind2web": 4, "spreadsheetbench": 4}
ITER_COT_DEFAULT_EXEMPLARS = 8


@frozen(kw_only=True)
class IterCotMethod:
    """Every construction call is made by the target: zero-shot chain of thought, revisions in
    the same conversation, a summary; exemplars appended to the initial skill.

    `temperature` is what the zero-shot calls ask for; None when the target's backend takes no
    temperature (the shell decides, and the manifest then says so with null). `exemplars`
    None: the task's count (`ITER_COT_EXEMPLARS`)."""

    method: ClassVar[Method] = Method.ITER_COT
    temperature: float | None = 0.7
    max_revisions: int = field(default=6, validator=_positive)
    exemplars: int | None = field(default=None)

    @exemplars.validator
    def _exemplars_ok(self, attribute: attrs.Attribute, value: int | None) -> None:
        if value is not None:
            _positive(self, attribute, value)

    def exemplars_for(self, task_name: str) -> int:
        if self.exemplars is not None:
            return self.exemplars
        return ITER_COT_EXEMPLARS.get(task_name, ITER_COT_DEFAULT_EXEMPLARS)


@frozen(kw_only=True)
class Trace2SkillMethod:
    """The combined variant: lessons from successful and failed trajectories, consolidated into
    a skill by three runs that vary record order and grouping; the best on the evolution
    samples wins, else the initial skill."""

    method: ClassVar[Method] = Method.TRACE2SKILL
    seeds: tuple[int, ...] = field(default=(41, 42, 43), converter=tuple)
    group_size: int = field(default=5, validator=_positive)  # the released merge batch
    merge_levels: int = field(default=5, validator=_positive)  # the released cap on levels

    @seeds.validator
    def _seeds_ok(self, _attribute: attrs.Attribute, value: tuple[int, ...]) -> None:
        if not value or any(s < 0 for s in value):
            raise ConfigError("method seeds: give at least one seed, each >= 0", field="seeds")


@frozen(kw_only=True)
class SkillOptMethod:
    """SkillOpt's trainer: batches of 40, reflection minibatches of 8, edits merged in groups
    of 8 and applied top-k with k decaying 4 -> 2 on a cosine schedule, each step gated on
    the selection split (strictly better), a slow update and meta guidance at epoch ends from
    the second epoch on. `validation_frac` 1/3 and 4 epochs, 20 slow-update samples: the
    released defaults (train:val 2:1)."""

    method: ClassVar[Method] = Method.SKILLOPT
    batch: int = field(default=40, validator=_positive)
    minibatch: int = field(default=8, validator=_positive)
    merge_group: int = field(default=8, validator=_positive)
    edits_start: int = field(default=4, validator=_positive)
    edits_end: int = field(default=2, validator=_positive)
    epochs: int = field(default=4, validator=_positive)
    slow_update_samples: int = field(default=20, validator=_positive)
    validation_frac: float = field(default=1 / 3, validator=_fraction)


@frozen(kw_only=True)
class GepaMethod:
    """GEPA through the `gepa` package: one editable component (the skill as the target's
    system prompt), Pareto candidate selection, reflection minibatches of 3, merge off; train
    split 80/20 for generation (GEPA's trainset) and internal validation (its valset)."""

    method: ClassVar[Method] = Method.GEPA
    minibatch: int = field(default=3, validator=_positive)
    validation_frac: float = field(default=0.2, validator=_fraction)
    candidate_selection: str = field(default="pareto")
    use_merge: bool = False

    @candidate_selection.validator
    def _selection_ok(self, _attribute: attrs.Attribute, value: str) -> None:
        if value not in GEPA_SELECTIONS:
            raise ConfigError(f"method candidate_selection: use one of "
                              f"{' | '.join(GEPA_SELECTIONS)}, got {value!r}",
                              field="candidate_selection")


# GEPA's candidate selection strategies that depend on nothing but its seed
GEPA_SELECTIONS = ("pareto", "current_best")

MethodSpec = (StraTuneMethod | TextGradMethod | IterCotMethod | Trace2SkillMethod | SkillOptMethod
              | GepaMethod)

SPECS: tuple[type[MethodSpec], ...] = MethodSpec.__args__  # type: ignore[attr-defined]
_BY_METHOD: dict[Method, type[MethodSpec]] = {cls.method: cls for cls in SPECS}


def generator_names() -> tuple[str, ...]:
    return tuple(g.value for g in Generator)


def method_names() -> tuple[str, ...]:
    return tuple(m.value for m in Method)


def default_spec(name: str) -> MethodSpec:
    """The paper's settings of the method called `name`; a one-line error for an unknown one."""
    try:
        method = Method(name)
    except ValueError:
        raise ConfigError(f"--method: unknown method {name!r}; use one of "
                          f"{' | '.join(method_names())}") from None
    return _BY_METHOD[method]()
# Fields a trace writes only when set, as before they existed (the trace converter reads this):
# StraTune's own generation is written without the key, as before the hybrids existed
OMIT_IF_DEFAULT: dict[type[MethodSpec], tuple[str, ...]] = {StraTuneMethod: ("generator",)}


def default_method() -> MethodSpec:
    """The method of a run that names none (no --method, no `method` in a grid ablation, a
    manifest recorded before the baselines existed): StraTune's own rounds."""
    return StraTuneMethod()


def takes_generator(spec: MethodSpec) -> bool:
    """Whether another method's candidate generation can run inside `spec`'s rounds (a hybrid,
    Table 4): only StraTune's rounds take one."""
    return isinstance(spec, StraTuneMethod)


def generator_of(spec: MethodSpec) -> Generator | None:
    """The generator of a hybrid run; None for any other run."""
    return spec.generator if isinstance(spec, StraTuneMethod) else None


def hybrid_spec(generator: Generator | str) -> MethodSpec:
    """The hybrid whose candidates `generator`'s method writes in StraTune's rounds."""
    return StraTuneMethod(generator=Generator(generator))
