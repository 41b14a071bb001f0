"""Event-log lines of the baselines' events (stratune_core/records/method_events.py), registered on
the viewer's `event_line`."""

from __future__ import annotations

from rich.text import Text

from replay.viewer.events_log import event_line
from replay.viewer.style import short_id
from stratune_core.state.events import (
    ConsolidationDone,
    EditsSelected,
    EpochReviewed,
    ExecutionsRefused,
    ExemplarsChosen,
    FinalChosen,
    GeneratorProposed,
    GepaIteration,
    LessonsExtracted,
    MethodStarted,
    RevisionRound,
    SkillScored,
    SplitMade,
    SummaryChecked,
    TargetExecuted,
    UpdateDecided,
)


@event_line.register
def _(e: MethodStarted) -> Text:
    return Text(f"method {e.method.value}: {e.settings}", style="bold")


@event_line.register
def _(e: SplitMade) -> Text:
    return Text(f"train split: {len(e.fit_ids)} for updates, {len(e.validation_ids)} for "
                "internal validation", style="dim")


@event_line.register
def _(e: TargetExecuted) -> Text:
    return Text(f"{e.purpose.value}: {short_id(e.skill_id)} on {len(e.sample_ids)} new, "
                f"{e.reused} reused (spent {e.spent})", style="dim")


@event_line.register
def _(e: ExecutionsRefused) -> Text:
    return Text(f"{e.purpose.value} refused: {e.needed} executions needed, {e.remaining} left",
                style="yellow")


@event_line.register
def _(e: SkillScored) -> Text:
    return Text(f"{short_id(e.skill_id)} on {e.purpose.value}: mean {e.mean:.3f}, "
                f"{e.solved}/{e.n} solved")


@event_line.register
def _(e: UpdateDecided) -> Text:
    what = short_id(e.candidate_id) if e.candidate_id else "no skill"
    scores = "" if e.score is None else f" ({e.score:.3f} vs {e.reference_score:.3f})"
    detail = f": {e.detail}" if e.detail else ""
    return Text(f"update {what} {e.verdict.value}{scores}{detail}")


@event_line.register
def _(e: RevisionRound) -> Text:
    return Text(f"revision {e.iteration}: {len(e.corrected)} of {len(e.revised)} corrected")


@event_line.register
def _(e: SummaryChecked) -> Text:
    return Text(f"summary of {e.sample_id} {'kept' if e.kept else 'dropped (answer changed)'}",
                style="dim")


@event_line.register
def _(e: ExemplarsChosen) -> Text:
    return Text(f"exemplars: {', '.join(e.sample_ids) or 'none'} from a pool of {e.pool}")


@event_line.register
def _(e: LessonsExtracted) -> Text:
    kind = "success" if e.solved else "failure"
    return Text(f"{e.lessons} lesson(s) from the {kind} on {e.sample_id}", style="dim")


@event_line.register
def _(e: ConsolidationDone) -> Text:
    made = short_id(e.candidate_id) if e.candidate_id else "no skill"
    detail = f": {e.detail}" if e.detail else ""
    return Text(f"consolidation seed {e.seed} over {e.groups} groups{consolidation_shape(e)}: {made}{detail}")


def consolidation_shape(e: ConsolidationDone) -> str:
    """The merge levels and the lessons the skill was written from, where recorded."""
    levels = f" in {e.levels} level(s)" if e.levels else ""
    return levels + (f", {e.lessons} lesson(s) written" if e.lessons else "")


@event_line.register
def _(e: FinalChosen) -> Text:
    scores = ", ".join(f"{short_id(s)} {v:.3f}" for s, v in zip(e.skill_ids, e.scores,
                                                                 strict=True))
    return Text(f"final choice {short_id(e.final_id)} among {scores}", style="bold")


@event_line.register
def _(e: EditsSelected) -> Text:
    return Text(f"{e.proposed} edits proposed, {e.merged} after merging, {e.applied} of at most "
                f"{e.limit} applied")


@event_line.register
def _(e: EpochReviewed) -> Text:
    memory = "; meta guidance written" if e.guidance else ""
    return Text(f"epoch {e.epoch + 1} review of {short_id(e.previous_id)} -> "
                f"{short_id(e.current_id)}: {e.improved} improved, {e.regressed} regressed, "
                f"{e.persistent_fail} still failing, {e.stable_success} still solved{memory}")


@event_line.register
def _(e: GepaIteration) -> Text:
    return Text(gepa_outcome(e))


def gepa_outcome(e: GepaIteration) -> str:
    """One GEPA iteration in words: the parent, the proposal's minibatch sums, what became of it."""
    head = f"iteration {e.round}: parent {short_id(e.parent_id)}"
    if e.candidate_id is None:
        return f"{head}, no proposal" + (f" ({e.detail})" if e.detail else "")
    sums = f"minibatch {sum(e.parent_scores):.2f} -> {sum(e.candidate_scores):.2f}"
    if not e.accepted:
        return f"{head}, {short_id(e.candidate_id)} rejected ({sums})"
    validation = "" if e.validation is None else f", validation {e.validation:.3f}"
    return (f"{head}, {short_id(e.candidate_id)} added to the pool ({sums}{validation}); "
            f"front of {len(e.front)}")


@event_line.register
def _(e: GeneratorProposed) -> Text:
    made = short_id(e.candidate_id) if e.candidate_id else "nothing"
    detail = f" ({e.detail})" if e.detail else ""
    return Text(f"{e.generator.value} generator on {len(e.sample_ids)} executions: {made}{detail}")
