"""The baselines' own events. A baseline run is framed by the same `RunStarted`, `SkillAdded`
and `RunFinished` as a StraTune run; these say what happened in between. Don't subclass these.
"""

from __future__ import annotations

from attrs import field, frozen

from stratune_core.records.method_spec import Generator, Method
from stratune_core.records.purposes import MethodPurpose, UpdateVerdict


@frozen(kw_only=True)
class MethodStarted:
    method: Method = field(converter=Method)
    settings: str  # the method's settings, as the manifest spells them (JSON)


@frozen(kw_only=True)
class SplitMade:
    """The method's own split of the training set (80/20: updates, internal validation)."""

    fit_ids: tuple[str, ...] = field(converter=tuple)
    validation_ids: tuple[str, ...] = field(converter=tuple)


@frozen(kw_only=True)
class TargetExecuted:
    """Target executions paid for one purpose: one unit of budget per id in `sample_ids`;
    `reused` pairs were answered by the ledger for free."""

    round: int
    purpose: MethodPurpose = field(converter=MethodPurpose)
    skill_id: str
    sample_ids: tuple[str, ...] = field(converter=tuple)
    reused: int = 0
    spent: int


@frozen(kw_only=True)
class ExecutionsRefused:
    """A group of executions did not fit in what is left of the budget; nothing was run."""

    round: int
    purpose: MethodPurpose = field(converter=MethodPurpose)
    needed: int
    remaining: int


@frozen(kw_only=True)
class SkillScored:
    round: int
    skill_id: str
    purpose: MethodPurpose = field(converter=MethodPurpose)
    n: int
    mean: float
    solved: int


@frozen(kw_only=True)
class UpdateDecided:
    """A proposed skill (TextGrad's step) and what became of it."""

    round: int
    parent_id: str
    candidate_id: str | None
    verdict: UpdateVerdict = field(converter=UpdateVerdict)
    score: float | None = None
    reference_score: float | None = None
    detail: str = ""


@frozen(kw_only=True)
class RevisionRound:
    """Iter-CoT: one revision turn over every still-wrong answer."""

    iteration: int
    revised: tuple[str, ...] = field(converter=tuple)
    corrected: tuple[str, ...] = field(converter=tuple)


@frozen(kw_only=True)
class SummaryChecked:
    """Iter-CoT: a summary of a corrected conversation, kept iff its answer is still right
    (the call is logged, not counted in the budget)."""

    sample_id: str
    kept: bool


@frozen(kw_only=True)
class ExemplarsChosen:
    pool: int
    sample_ids: tuple[str, ...] = field(converter=tuple)


@frozen(kw_only=True)
class LessonsExtracted:
    """Trace2Skill: an analyst's lessons from one trajectory."""

    sample_id: str
    solved: bool
    lessons: int


@frozen(kw_only=True)
class ConsolidationDone:
    """Trace2Skill: one consolidation run (record order and grouping from `seed`): `groups`
    merge calls over `levels` levels, and the number of `lessons` the skill was written from."""

    seed: int
    candidate_id: str | None
    groups: int
    levels: int = 0
    lessons: int = 0
    detail: str = ""


@frozen(kw_only=True)
class FinalChosen:
    """The method's final choice among scored skills (`scores` in the order of `skill_ids`)."""

    skill_ids: tuple[str, ...] = field(converter=tuple)
    scores: tuple[float, ...] = field(converter=tuple)
    final_id: str


@frozen(kw_only=True)
class EditsSelected:
    """SkillOpt: a step's edit proposals, merged, ranked and clipped to the step's `limit`
    (the cosine schedule); `applied` of the selected edits applied to the skill."""

    round: int
    proposed: int
    merged: int
    limit: int
    applied: int


@frozen(kw_only=True)
class EpochReviewed:
    """SkillOpt at an epoch end: the previous epoch's skill against the current one on the same
    samples (the slow update's longitudinal comparison), and whether meta guidance was written."""

    epoch: int
    previous_id: str
    current_id: str
    improved: int
    regressed: int
    persistent_fail: int
    stable_success: int
    guidance: bool


@frozen(kw_only=True)
class GepaIteration:
    """GEPA: one iteration of its loop. The parent drawn from the Pareto front, its scores on
    the reflection minibatch, the proposal and its scores on the same minibatch, whether it
    entered the pool (strictly better on the minibatch) with its internal validation score,
    and the pool's Pareto front afterwards (skill ids, in pool order). `detail` says why an
    iteration proposed nothing."""

    round: int
    parent_id: str
    minibatch_ids: tuple[str, ...] = field(converter=tuple)
    parent_scores: tuple[float, ...] = field(converter=tuple)
    candidate_id: str | None = None
    candidate_scores: tuple[float, ...] = field(default=(), converter=tuple)
    accepted: bool = False
    validation: float | None = None
    front: tuple[str, ...] = field(default=(), converter=tuple)
    detail: str = ""


@frozen(kw_only=True)
class GeneratorProposed:
    """A hybrid of Table 4 (`--generator`): what another method's candidate generation made of
    the current skill and the round's batch. `sample_ids`: the executions it was shown;
    `candidate_id` None: it proposed nothing (`detail` says why)."""

    round: int
    generator: Generator = field(converter=Generator)
    sample_ids: tuple[str, ...] = field(converter=tuple)
    candidate_id: str | None = None
    detail: str = ""


# the events that close one step of a baseline's run, which the progress display counts
STEP_EVENTS = (UpdateDecided, RevisionRound, ConsolidationDone, EpochReviewed, FinalChosen,
               GepaIteration)
