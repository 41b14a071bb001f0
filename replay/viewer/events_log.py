"""One line of text per event, dispatched on the event type (the round detail's log)."""

from __future__ import annotations

from functools import singledispatch

from rich.text import Text

from replay.viewer.style import clip, operator_label, short_id, signed, verdict_text
from stratune_core.evaluation import Outcome
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
from stratune_core.state.events import (
    BatchExecuted,
    CandidateDecided,
    CandidateGenerated,
    CandidateInvalid,
    CandidatePruned,
    CandidateUnaffordable,
    DraftsRanked,
    ExecutionsCharged,
    FeedbackPrepared,
    FinalComparison,
    OperatorChosen,
    RefinementAdvanced,
    RoundSkipped,
    RoundStarted,
    RunFinished,
    RunStarted,
    SkillAdded,
    SkillReplaced,
    StageResult,
)


def outcome_summary(outcome: Outcome) -> str:
    s = outcome.stats
    c = s.counts
    return (f"Δ {s.gain:+.3f} (≥ {outcome.threshold:.3f}) W/L {s.wins}/{s.losses} "
            f"D/U/S {c.D}/{c.U}/{c.S} n={s.n}")


@singledispatch
def event_line(event: object) -> Text:
    return Text(type(event).__name__, style="dim")


@event_line.register
def _(e: RunStarted) -> Text:
    return Text(f"run started: task {e.task}, {e.n_train} training samples, budget {e.budget} "
                f"(reserve {e.reserve}), {e.n_batches} batches, initial skill "
                f"{short_id(e.initial_skill_id)}")


@event_line.register
def _(e: SkillAdded) -> Text:
    parent = "" if e.parent_id is None else f" from {short_id(e.parent_id)}"
    return Text(f"skill {short_id(e.skill_id)} added{parent} ({len(e.text)} chars)", style="dim")


@event_line.register
def _(e: RoundStarted) -> Text:
    return Text(f"round {e.round + 1} started: epoch {e.epoch + 1}, batch {e.batch_index}, "
                f"current {short_id(e.current_id)}, spent {e.spent}", style="bold")


@event_line.register
def _(e: ExecutionsCharged) -> Text:
    return Text(f"executions for {e.purpose}: {e.new} new, {e.reused} reused → spent {e.spent}",
                style="dim")


@event_line.register
def _(e: BatchExecuted) -> Text:
    return Text(f"batch run with {short_id(e.skill_id)}: {e.solved}/{len(e.sample_ids)} solved, "
                f"mean score {e.mean_score:.3f}")


@event_line.register
def _(e: OperatorChosen) -> Text:
    line = Text("operator ").append_text(operator_label(e.strategy, e.form))
    line.append(f" by {e.source}: {clip(e.why, 80)}")
    if e.fallback:
        line.append(f" [fallback: {clip(e.detail, 60)}]", style="yellow")
    return line


@event_line.register
def _(e: RoundSkipped) -> Text:
    return Text(f"round {e.round + 1} skipped: {e.reason}", style="yellow")


@event_line.register
def _(e: FeedbackPrepared) -> Text:
    if e.detail:
        return Text(f"feedback preparation gave nothing: {clip(e.detail, 70)}", style="yellow")
    return Text(f"feedback prepared on {e.failures} failures: {len(e.diagnosed)} diagnosed, "
                f"{len(e.verified)} verified of {e.checkable} checkable; "
                f"{len(e.successes)} successes summarised", style="dim")


@event_line.register
def _(e: CandidateGenerated) -> Text:
    line = Text(f"candidate {short_id(e.candidate_id)} from {short_id(e.parent_id)} ")
    line.append_text(operator_label(e.strategy, e.form))
    if e.theme:
        line.append(f" “{clip(e.theme, 50)}”")
    return line


@event_line.register
def _(e: CandidateInvalid) -> Text:
    form = "" if e.form is None else f"+{e.form.value}"
    return Text(f"invalid {e.strategy.value}{form} draft: {e.reason.value}"
                + (f" ({clip(e.detail, 60)})" if e.detail else ""), style="red")


@event_line.register
def _(e: DraftsRanked) -> Text:
    scores = ", ".join(f"{short_id(c)} {s:.3f}" for c, s in zip(e.candidate_ids, e.scores,
                                                                   strict=False))
    submitted = ", ".join(short_id(c) for c in e.submitted) or "none"
    return Text(f"{e.strategy.value} drafts ranked vs {short_id(e.reference_id)} "
                f"{e.reference_score:.3f}: {scores}; submitted {submitted}")


@event_line.register
def _(e: StageResult) -> Text:
    verdict = Text("passed", style="green") if e.outcome.passed else Text("failed", style="red")
    line = Text(f"{e.outcome.stage.value} of {short_id(e.candidate_id)}: ")
    line.append_text(verdict)
    line.append(f" {outcome_summary(e.outcome)}")
    if e.outcome.failed:
        line.append(f" [{', '.join(r.value for r in e.outcome.failed)}]", style="dim")
    return line


@event_line.register
def _(e: CandidateUnaffordable) -> Text:
    return Text(f"{e.stage.value} of {short_id(e.candidate_id)} unaffordable: needs {e.cost}, "
                f"{e.remaining} left", style="dim")


@event_line.register
def _(e: CandidateDecided) -> Text:
    line = Text(f"decision on {short_id(e.candidate_id)}: ").append_text(verdict_text(e.verdict))
    if e.reasons:
        line.append(f" ({', '.join(r.value for r in e.reasons)})", style="dim")
    return line


@event_line.register
def _(e: CandidatePruned) -> Text:
    return Text(f"{short_id(e.candidate_id)} dropped from the saved pool (archive cap)",
                style="dim")


@event_line.register
def _(e: SkillReplaced) -> Text:
    return Text(f"current skill {short_id(e.previous_id)} → {short_id(e.current_id)}",
                style="bold green")


@event_line.register
def _(e: RefinementAdvanced) -> Text:
    state = "advanced" if e.advanced else "held"
    return Text(f"refinement {state}: intermediate {short_id(e.intermediate_id)}, "
                f"{e.steps} step(s)")


@event_line.register
def _(e: FinalComparison) -> Text:
    result = "replaces" if e.replaced else "does not replace"
    return Text(f"final selection: {short_id(e.candidate_id)} {result} "
                f"{short_id(e.selected_id)} (selection Δ {signed(e.selection.stats.gain)}, "
                f"confirmation Δ {signed(e.confirmation.stats.gain)})")


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


@event_line.register
def _(e: RunFinished) -> Text:
    return Text(f"run finished ({e.reason.value}) after {e.rounds} rounds: final skill "
                f"{short_id(e.final_id)}, spent {e.spent}/{e.budget}", style="bold")


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
