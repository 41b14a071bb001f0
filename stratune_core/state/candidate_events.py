"""The events of candidates: generated or refused before any execution, ranked, screened and
validated stage by stage, decided, pruned, accepted (`SkillReplaced`), I2's steps, and final
selection's comparisons. Members of the `Event` union (`state/events.py`)."""

from __future__ import annotations

from attrs import field, frozen

from stratune_core.evaluation.gates import Outcome
from stratune_core.records.enums import Form, Reason, Stage, Strategy, Verdict


@frozen(kw_only=True)
class CandidateGenerated:
    round: int
    candidate_id: str
    parent_id: str
    strategy: Strategy
    form: Form | None
    theme: str = ""
    draw: int = 0
    sources: tuple[str, ...] = field(default=(), converter=tuple)


@frozen(kw_only=True)
class CandidateInvalid:
    round: int
    strategy: Strategy
    form: Form | None
    reason: Reason
    detail: str = ""
    draw: int = 0


@frozen(kw_only=True)
class DraftsRanked:
    """I2/I3: drafts scored on the common ranking subset before submission."""

    round: int
    strategy: Strategy
    reference_id: str
    reference_score: float
    candidate_ids: tuple[str, ...] = field(converter=tuple)
    scores: tuple[float, ...] = field(converter=tuple)
    submitted: tuple[str, ...] = field(converter=tuple)
    sample_ids: tuple[str, ...] = field(default=(), converter=tuple)  # the ranking subset


@frozen(kw_only=True)
class StageResult:
    """Screening or validation of one candidate against the current skill."""

    round: int
    candidate_id: str
    reference_id: str
    outcome: Outcome
    sample_ids: tuple[str, ...] = field(converter=tuple)


@frozen(kw_only=True)
class CandidateUnaffordable:
    round: int
    candidate_id: str
    stage: Stage
    cost: int
    remaining: int


@frozen(kw_only=True)
class CandidateDecided:
    round: int
    candidate_id: str
    verdict: Verdict
    reasons: tuple[Reason, ...] = field(default=(), converter=tuple)


@frozen(kw_only=True)
class CandidatePruned:
    """A saved candidate dropped from the pool (at most `archive_cap` are kept; `round/pool.py`)."""

    round: int
    candidate_id: str


@frozen(kw_only=True)
class SkillReplaced:
    round: int
    previous_id: str
    current_id: str


@frozen(kw_only=True)
class RefinementAdvanced:
    round: int
    intermediate_id: str
    steps: int
    advanced: bool


@frozen(kw_only=True)
class FinalComparison:
    """One saved candidate against the skill selected so far, on the selection subset and then
    the confirmation subset of the common set (`selection_ids`, `confirmation_ids`)."""

    candidate_id: str
    selected_id: str
    selection: Outcome
    confirmation: Outcome
    replaced: bool
    selection_ids: tuple[str, ...] = field(default=(), converter=tuple)
    confirmation_ids: tuple[str, ...] = field(default=(), converter=tuple)
