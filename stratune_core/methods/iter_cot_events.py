"""Iter-CoT's own events (a revision turn, a summary's check, the exemplars chosen) and how
the shell shows them (`VIEWS`, on Iter-CoT's entry)."""

from __future__ import annotations

from attrs import field, frozen

from stratune_core.methods.event_view import EventView, Row


@frozen(kw_only=True)
class RevisionRound:
    """Iter-CoT: one revision turn over every still-wrong answer. Don't subclass this."""

    iteration: int
    revised: tuple[str, ...] = field(converter=tuple)
    corrected: tuple[str, ...] = field(converter=tuple)


@frozen(kw_only=True)
class SummaryChecked:
    """Iter-CoT: a summary of a corrected conversation, kept iff its answer is still right
    (the call is logged, not counted in the budget). Don't subclass this."""

    sample_id: str
    kept: bool


@frozen(kw_only=True)
class ExemplarsChosen:
    """Iter-CoT: the exemplars appended to the skill, from a pool of corrected summaries.
    Don't subclass this."""

    pool: int
    sample_ids: tuple[str, ...] = field(converter=tuple)


def _revision_line(e: RevisionRound) -> str:
    return f"revision {e.iteration}: {len(e.corrected)} of {len(e.revised)} corrected"


def _revision_row(e: RevisionRound) -> Row:
    return (f"revision {e.iteration}", "", "", "",
            f"{len(e.corrected)} of {len(e.revised)} corrected")


def _summary_line(e: SummaryChecked) -> str:
    return f"summary of {e.sample_id} {'kept' if e.kept else 'dropped (answer changed)'}"


def _exemplars_line(e: ExemplarsChosen) -> str:
    return f"exemplars: {', '.join(e.sample_ids) or 'none'} from a pool of {e.pool}"


def _exemplars_row(e: ExemplarsChosen) -> Row:
    return ("exemplars", "", "", "", f"{len(e.sample_ids)} of a pool of {e.pool}")


VIEWS = (
    EventView(event=RevisionRound, line=_revision_line, row=_revision_row, step=True),
    EventView(event=SummaryChecked, line=_summary_line, style="dim"),
    EventView(event=ExemplarsChosen, line=_exemplars_line, row=_exemplars_row),
)
