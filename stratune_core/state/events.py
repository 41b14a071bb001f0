"""Events: small frozen records, one per thing that happened. The shell persists and renders them.

Skill texts travel in `SkillAdded` once per distinct skill; every other event names skills by id.
Don't subclass these.
"""

from __future__ import annotations

from attrs import field, frozen

from stratune_core.records.enums import (
    Form,
    Purpose,
    SkipReason,
    StopReason,
    Strategy,
)
from stratune_core.records.method_events import (
    ExecutionsRefused,
    FinalChosen,
    GeneratorProposed,
    MethodStarted,
    SkillScored,
    SplitMade,
    TargetExecuted,
    UpdateDecided,
)
from stratune_core.released.events import (
    CandidateBranched,
    EarlyStopWaived,
    FeedbackExtended,
    FixesAnnotated,
    FutilityStopped,
    ProbationOpened,
    RankingSmokeFailed,
    RefinementKept,
    ResidualsPooled,
    RuleChecked,
    SalvageAttempted,
    ScreeningDeferred,
    SeatRefused,
    SmokeFailed,
    SmokePassed,
    StrategiesNarrowed,
    WarmupRound,
    WindowSubmitted,
)
from stratune_core.selection.selectors.base import Source
from stratune_core.selection.selectors.registry import to_source
from stratune_core.state.candidate_events import (
    CandidateDecided,
    CandidateGenerated,
    CandidateInvalid,
    CandidatePruned,
    CandidateUnaffordable,
    DraftsRanked,
    FinalComparison,
    RefinementAdvanced,
    SkillReplaced,
    StageResult,
)


def to_pairs(value: object) -> tuple[tuple[str, str], ...]:
    """(skill id, sample id) pairs from any iterable of 2-item iterables (JSON gives lists)."""
    return tuple((str(a), str(b)) for a, b in value)  # type: ignore[attr-defined]


@frozen(kw_only=True)
class RunStarted:
    task: str
    n_train: int
    budget: int
    reserve: int
    initial_skill_id: str
    n_batches: int


@frozen(kw_only=True)
class SkillAdded:
    skill_id: str
    text: str
    parent_id: str | None = None


@frozen(kw_only=True)
class RoundStarted:
    round: int
    epoch: int
    batch_index: int
    current_id: str
    spent: int


@frozen(kw_only=True)
class ExecutionsCharged:
    """Executions paid for one `Purpose`; `new` were charged, `reused` came from the ledger.
    `pairs` names each charged execution as (skill id, sample id), in the order it ran, so the
    events alone attribute every unit of the budget to a sample and a purpose."""

    round: int
    purpose: Purpose = field(converter=Purpose)
    skill_ids: tuple[str, ...] = field(converter=tuple)
    new: int
    reused: int
    spent: int
    pairs: tuple[tuple[str, str], ...] = field(default=(), converter=to_pairs)


@frozen(kw_only=True)
class BatchExecuted:
    round: int
    skill_id: str
    sample_ids: tuple[str, ...] = field(converter=tuple)
    solved: int
    mean_score: float


@frozen(kw_only=True)
class OperatorChosen:
    round: int
    strategy: Strategy
    form: Form | None
    why: str
    source: Source = field(converter=to_source)  # the selector, or the rule that overrode it
    fallback: bool = False
    detail: str = ""  # why the optimizer's reply was not usable, when fallback


@frozen(kw_only=True)
class RoundSkipped:
    round: int
    reason: SkipReason = field(converter=SkipReason)


@frozen(kw_only=True)
class FeedbackPrepared:
    """Feedback preparation before generation (paper App. D.4): the failures the optimizer
    diagnosed, those it solved blind with the task's scorer accepting its answer (`verified`),
    and the successful trajectories it summarised, and whether it wrote the rule the failures
    share (`shared`). `withheld`: diagnoses the task's scorer
    contradicts, never shown to the generator. `detail` says why a reply gave nothing."""

    round: int
    skill_id: str
    failures: int  # failures shown to the call
    checkable: int  # of those, shown blind for the optimizer to solve
    diagnosed: tuple[str, ...] = field(default=(), converter=tuple)
    verified: tuple[str, ...] = field(default=(), converter=tuple)
    successes: tuple[str, ...] = field(default=(), converter=tuple)
    detail: str = ""
    withheld: tuple[str, ...] = field(default=(), converter=tuple)
    shared: bool = False  # a rule the failures share was written (and not contradicted)


@frozen(kw_only=True)
class RunFinished:
    final_id: str
    reason: StopReason
    rounds: int
    spent: int
    budget: int


Event = (
    RunStarted
    | SkillAdded
    | RoundStarted
    | ExecutionsCharged
    | BatchExecuted
    | OperatorChosen
    | RoundSkipped
    | WarmupRound
    | ResidualsPooled
    | FeedbackExtended
    | StrategiesNarrowed
    | FeedbackPrepared
    | FixesAnnotated
    | CandidateGenerated
    | CandidateInvalid
    | DraftsRanked
    | StageResult
    | CandidateUnaffordable
    | CandidateDecided
    | CandidatePruned
    | SkillReplaced
    | RefinementAdvanced
    | WindowSubmitted
    | RefinementKept
    | FinalComparison
    | SmokeFailed
    | SmokePassed
    | RankingSmokeFailed
    | FutilityStopped
    | ProbationOpened
    | CandidateBranched
    | RuleChecked
    | ScreeningDeferred
    | SeatRefused
    | EarlyStopWaived
    | SalvageAttempted
    # the events every baseline may emit (stratune_core/records/method_events.py); each
    # method's own events join them in the trace's union, `round/registry.TRACE_EVENTS`
    | MethodStarted
    | SplitMade
    | TargetExecuted
    | ExecutionsRefused
    | SkillScored
    | UpdateDecided
    | FinalChosen
    | GeneratorProposed
    | RunFinished
)

EVENT_TYPES: tuple[type, ...] = Event.__args__  # type: ignore[attr-defined]
