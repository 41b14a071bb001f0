"""Events of the released code's mechanisms (docs/design.md, "Profiles"). The round's: warm-up,
residual pooling, the further feedback blocks, the affordability guards, verified fixes, the I2
window and the refinement kept on acceptance. The evaluation's: the smoke check, the futility
stops, probation, the branch rule, early stopping waived for I2, final-selection seats and
donor salvage. Part of the
`events.Event` union; the paper profile never emits them."""

from __future__ import annotations

from attrs import field, frozen

from stratune_core.evaluation.rules import Condition, Rule
from stratune_core.records.enums import SeatRule, Stage, Strategy


@frozen(kw_only=True)
class WarmupRound:
    """Released code: a round that only ran s_0 on its batch, to learn solved samples for the
    screening sets; generation starts once `needed` are known or the warm-up's batches ran out
    (`done`)."""

    round: int
    skill_id: str
    solved_known: int
    needed: int
    done: bool


@frozen(kw_only=True)
class ResidualsPooled:
    """Released code: the batch had few failures, so known failures of the skill on earlier
    batches were added to E_t (read from the ledger: they cost nothing)."""

    round: int
    skill_id: str
    batch_failures: int
    sample_ids: tuple[str, ...] = field(converter=tuple)


@frozen(kw_only=True)
class FeedbackExtended:
    """Released code: the further blocks of E_t built this round (`round/extras.py`):
    contrast samples, the longitudinal counts (improved, regressed, persistent; empty when not
    shown), solved trajectories, gold pairs shown whatever the form, answer-statistics rows."""

    round: int
    skill_id: str
    contrast: tuple[str, ...] = field(default=(), converter=tuple)
    longitudinal: tuple[int, ...] = field(default=(), converter=tuple)
    trajectories: tuple[str, ...] = field(default=(), converter=tuple)
    gold_pairs: tuple[str, ...] = field(default=(), converter=tuple)
    stats: int = 0


@frozen(kw_only=True)
class StrategiesNarrowed:
    """Released code's affordability guards: strategies left off the optimizer's menu because
    B - spent (`remaining`) is below the guard's multiple of what their rounds rank."""

    round: int
    offered: tuple[Strategy, ...] = field(converter=tuple)
    dropped: tuple[Strategy, ...] = field(converter=tuple)
    remaining: int


@frozen(kw_only=True)
class FixesAnnotated:
    """Released code's verified fixes: failures shown with the optimizer's blind solve, which
    the task's scorer accepted (`verified`) or not (`unverified`)."""

    round: int
    skill_id: str
    verified: tuple[str, ...] = field(default=(), converter=tuple)
    unverified: tuple[str, ...] = field(default=(), converter=tuple)


@frozen(kw_only=True)
class WindowSubmitted:
    """Released code's I2 window: the pending drafts (ranking scores against the intermediate
    skill's), and those sent to candidate evaluation; `flush` at the end of the run."""

    round: int
    candidate_ids: tuple[str, ...] = field(converter=tuple)
    scores: tuple[float, ...] = field(converter=tuple)
    reference_scores: tuple[float, ...] = field(converter=tuple)
    submitted: tuple[str, ...] = field(converter=tuple)
    flush: bool = False


@frozen(kw_only=True)
class RefinementKept:
    """Released code: an I1/I3 candidate replaced s_t and I2 keeps its intermediate skill."""

    round: int
    accepted_id: str
    intermediate_id: str
    steps: int


# --- the released profile's evaluation mechanisms (docs/design.md, "Released profile") ----


@frozen(kw_only=True)
class SmokeFailed:
    """The smoke check: the candidate alone, on solved samples of Q_s, broke at least
    `screen_smoke_broken` of them and kept none; the rest of screening was not run."""

    round: int
    candidate_id: str
    sample_ids: tuple[str, ...] = field(converter=tuple)
    broken: int
    kept: int


@frozen(kw_only=True)
class SmokePassed:
    """The smoke check passed (fewer than `screen_smoke_broken` broken, or some kept): the
    samples it ran the candidate on, then screening goes on."""

    round: int
    candidate_id: str
    sample_ids: tuple[str, ...] = field(converter=tuple)
    broken: int
    kept: int


@frozen(kw_only=True)
class RankingSmokeFailed:
    """Released code: an I2/I3 draft scored under a quarter of the reference's ranking score on
    the first samples of the ranking subset (`sample_ids`) and was not ranked further."""

    round: int
    candidate_id: str
    sample_ids: tuple[str, ...] = field(converter=tuple)
    score: float
    reference_score: float


@frozen(kw_only=True)
class FutilityStopped:
    """The first stage of screening or validation already showed a loss; the rest of the
    stage was not run and the candidate is rejected."""

    round: int
    candidate_id: str
    stage: Stage
    sample_ids: tuple[str, ...] = field(converter=tuple)
    gain: float
    wins: int
    losses: int


@frozen(kw_only=True)
class ProbationOpened:
    """Screening was inconclusive (`changes` wins + losses): the candidate is screened again on
    a second, disjoint set (`sample_ids`) and decided on both sets together."""

    round: int
    candidate_id: str
    changes: int
    sample_ids: tuple[str, ...] = field(converter=tuple)


@frozen(kw_only=True)
class ScreeningDeferred:
    """Released code: a part of the candidate's screening set held under 70 % of its quota (few
    solved samples known or left unworn). The first time the candidate waits for the next
    round (`retry` False); the second time it is rejected for insufficient evidence."""

    round: int
    candidate_id: str
    solved: int
    random: int
    solved_quota: int
    random_quota: int
    retry: bool


@frozen(kw_only=True)
class CandidateBranched:
    """The branch rule: many wins and many losses, each spread over two or more strata; the
    candidate is saved for final skill selection without being accepted."""

    round: int
    candidate_id: str
    wins: int
    losses: int
    win_strata: int
    loss_strata: int


@frozen(kw_only=True)
class RuleChecked:
    """A released screening rule consulted for a candidate's call (`evaluation/rules.py`): the
    commit check with its guardrails, the branch rule, 'not clearly worse', the save rule;
    every condition with its value and limit, so the failed ones say why."""

    round: int
    candidate_id: str
    rule: Rule = field(converter=Rule)
    holds: bool
    conditions: tuple[Condition, ...] = field(converter=tuple)


@frozen(kw_only=True)
class EarlyStopWaived:
    """Early stopping: epoch `epoch` - 1 accepted nothing, but I2 submitted a draft in it (in
    round `i2_round`), so the run goes on (released code)."""

    round: int
    epoch: int
    i2_round: int


@frozen(kw_only=True)
class SeatRefused:
    """A saved candidate that does not reach final skill selection (`rule` says why)."""

    candidate_id: str
    rule: SeatRule = field(converter=SeatRule)
    common: int  # samples run by both it and the current skill


@frozen(kw_only=True)
class SalvageAttempted:
    """Donor salvage: the optimizer merged into s_t what made `donor_id` solve the `rescues`
    that s_t fails; `candidate_id` is the merged candidate (None: no usable one)."""

    round: int
    donor_id: str
    rescues: tuple[str, ...] = field(converter=tuple)
    candidate_id: str | None = None
