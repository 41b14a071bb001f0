"""Trace2Skill's own events (an analyst's lessons, one consolidation run) and how the shell
shows them (`VIEWS`, on Trace2Skill's entry)."""

from __future__ import annotations

from attrs import frozen

from stratune_core.methods.event_view import EventView, Row, short_id


@frozen(kw_only=True)
class LessonsExtracted:
    """Trace2Skill: an analyst's lessons from one trajectory. Don't subclass this."""

    sample_id: str
    solved: bool
    lessons: int


@frozen(kw_only=True)
class ConsolidationDone:
    """Trace2Skill: one consolidation run (record order and grouping from `seed`): `groups`
    merge calls over `levels` levels, and the number of `lessons` the skill was written from.
    Don't subclass this."""

    seed: int
    candidate_id: str | None
    groups: int
    levels: int = 0
    lessons: int = 0
    detail: str = ""


def _lessons_line(e: LessonsExtracted) -> str:
    kind = "success" if e.solved else "failure"
    return f"{e.lessons} lesson(s) from the {kind} on {e.sample_id}"


def _shape(e: ConsolidationDone) -> str:
    """The merge levels and the lessons the skill was written from, where recorded."""
    levels = f" in {e.levels} level(s)" if e.levels else ""
    return levels + (f", {e.lessons} lesson(s) written" if e.lessons else "")


def _consolidation_line(e: ConsolidationDone) -> str:
    made = short_id(e.candidate_id) if e.candidate_id else "no skill"
    detail = f": {e.detail}" if e.detail else ""
    return f"consolidation seed {e.seed} over {e.groups} groups{_shape(e)}: {made}{detail}"


def _consolidation_row(e: ConsolidationDone) -> Row:
    skill = short_id(e.candidate_id) if e.candidate_id else ""
    return (f"consolidation seed {e.seed}", skill, "", "",
            f"{e.groups} groups{_shape(e)}" + (f": {e.detail}" if e.detail else ""))


VIEWS = (
    EventView(event=LessonsExtracted, line=_lessons_line, style="dim"),
    EventView(event=ConsolidationDone, line=_consolidation_line, row=_consolidation_row,
              step=True),
)
