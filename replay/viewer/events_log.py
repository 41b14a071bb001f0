"""One line of text per event, dispatched on the event type (the round detail's log)."""

from __future__ import annotations

from functools import singledispatch

from rich.text import Text

from replay.viewer.style import clip, operator_label, short_id, signed, verdict_text
from stratune_core.evaluation import Outcome
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
from stratune_core.state.events import (
    BatchExecuted,
    ExecutionsCharged,
    FeedbackPrepared,
    OperatorChosen,
    RoundSkipped,
    RoundStarted,
    RunFinished,
    RunStarted,
    SkillAdded,
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
def _(e: RunFinished) -> Text:
    return Text(f"run finished ({e.reason.value}) after {e.rounds} rounds: final skill "
                f"{short_id(e.final_id)}, spent {e.spent}/{e.budget}", style="bold")
