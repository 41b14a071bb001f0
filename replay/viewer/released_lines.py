"""The event lines of the released code's mechanisms (smoke checks, futility, probation, the
branch rule, warm-up, pooling, salvage, ...), registered on `events_log.event_line` when
`replay.viewer` is imported, as the baselines' lines are (`method_lines.py`)."""

from __future__ import annotations

from rich.text import Text

from replay.viewer.events_log import event_line
from replay.viewer.style import short_id
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


@event_line.register
def _(e: SmokeFailed) -> Text:
    return Text(f"smoke check of {short_id(e.candidate_id)}: {e.broken} of {len(e.sample_ids)} "
                f"solved samples broken, {e.kept} kept: rejected", style="red")


@event_line.register
def _(e: SmokePassed) -> Text:
    return Text(f"smoke check of {short_id(e.candidate_id)}: {e.broken} of {len(e.sample_ids)} "
                f"solved samples broken, {e.kept} kept: screening goes on", style="dim")


@event_line.register
def _(e: FutilityStopped) -> Text:
    return Text(f"{e.stage.value} of {short_id(e.candidate_id)} stopped after "
                f"{len(e.sample_ids)} samples: Δ {e.gain:+.3f} W/L {e.wins}/{e.losses}",
                style="red")


@event_line.register
def _(e: ProbationOpened) -> Text:
    return Text(f"probation for {short_id(e.candidate_id)}: {e.changes} changed samples; "
                f"screened again on {len(e.sample_ids)} more", style="yellow")


@event_line.register
def _(e: CandidateBranched) -> Text:
    return Text(f"{short_id(e.candidate_id)} branched: W/L {e.wins}/{e.losses} over "
                f"{e.win_strata}/{e.loss_strata} strata, saved without acceptance")


RULE_NAMES = {"commit": "acceptance", "branch": "branch rule", "not_clearly_worse":
              "not clearly worse", "save": "save rule"}


def rule_line(e: RuleChecked) -> str:
    """`acceptance of 1a2b3c: fails on guard_severe 2 > 1, aux_ok -0.020 < -0.010`."""
    name = RULE_NAMES.get(e.rule.value, e.rule.value)
    failed = [c for c in e.conditions if not c.passed]
    if not failed:
        return f"{name} of {short_id(e.candidate_id)}: holds"
    why = ", ".join(f"{c.term.value} {_num(c.value)} vs {_num(c.limit)}" for c in failed)
    return f"{name} of {short_id(e.candidate_id)}: fails on {why}"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.3f}"


@event_line.register
def _(e: RuleChecked) -> Text:
    return Text(rule_line(e), style=None if e.holds else "yellow")


@event_line.register
def _(e: RankingSmokeFailed) -> Text:
    return Text(f"draft {short_id(e.candidate_id)} killed on {len(e.sample_ids)} ranking samples: "
                f"{e.score:.3f} < 0.25 x {e.reference_score:.3f}", style="red")


@event_line.register
def _(e: ScreeningDeferred) -> Text:
    then = "rejected for insufficient evidence" if e.retry else "screened next round"
    return Text(f"screening set of {short_id(e.candidate_id)} not ready: {e.solved} of "
                f"{e.solved_quota} solved and {e.random} of {e.random_quota} random samples: "
                f"{then}", style="yellow")


@event_line.register
def _(e: EarlyStopWaived) -> Text:
    return Text(f"epoch {e.epoch - 1} accepted nothing, but I2 submitted in round {e.i2_round}: "
                "no early stop", style="yellow")


@event_line.register
def _(e: SeatRefused) -> Text:
    why = "the seats are taken" if e.rule == "seats" else f"{e.common} samples in common"
    return Text(f"{short_id(e.candidate_id)} gets no final-selection seat ({why})", style="dim")


@event_line.register
def _(e: SalvageAttempted) -> Text:
    made = "no usable merge" if e.candidate_id is None else f"merge {short_id(e.candidate_id)}"
    return Text(f"salvage of donor {short_id(e.donor_id)} ({len(e.rescues)} rescues): {made}")


# The released profile's round mechanisms (stratune_core/released/events.py).


@event_line.register
def _(e: WarmupRound) -> Text:
    then = "generation starts next round" if e.done else "warm-up goes on"
    return Text(f"warm-up: {e.solved_known} solved samples known of {e.needed} wanted; {then}",
                style="dim")


@event_line.register
def _(e: ResidualsPooled) -> Text:
    return Text(f"residual pooling: {len(e.sample_ids)} known failures added to the batch's "
                f"{e.batch_failures}", style="dim")


@event_line.register
def _(e: FeedbackExtended) -> Text:
    shown = [f"{len(e.contrast)} contrast"] if e.contrast else []
    if e.longitudinal:
        shown.append("since s0 +{} -{} ({} failing)".format(*e.longitudinal))
    shown += [f"{len(e.trajectories)} trajectories"] if e.trajectories else []
    shown += [f"{len(e.gold_pairs)} gold pairs"] if e.gold_pairs else []
    shown += [f"{e.stats} stats"] if e.stats else []
    return Text(f"feedback blocks: {', '.join(shown)}", style="dim")


@event_line.register
def _(e: StrategiesNarrowed) -> Text:
    offered = ", ".join(s.value for s in e.offered)
    dropped = ", ".join(s.value for s in e.dropped)
    return Text(f"menu narrowed to {offered} ({dropped} unaffordable with {e.remaining} left)",
                style="yellow")


@event_line.register
def _(e: FixesAnnotated) -> Text:
    return Text(f"verified fixes: {len(e.verified)} verified, {len(e.unverified)} unverified",
                style="dim")


@event_line.register
def _(e: WindowSubmitted) -> Text:
    which = "flushed" if e.flush else "full"
    submitted = ", ".join(short_id(c) for c in e.submitted) or "none"
    return Text(f"I2 window {which} ({len(e.candidate_ids)} drafts): submitted {submitted}")


@event_line.register
def _(e: RefinementKept) -> Text:
    return Text(f"refinement kept: intermediate {short_id(e.intermediate_id)}, {e.steps} "
                f"step(s), after {short_id(e.accepted_id)} replaced the current skill",
                style="dim")
