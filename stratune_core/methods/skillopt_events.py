"""SkillOpt's own events (a step's edit selection, an epoch's review) and how the shell shows
them (`VIEWS`, on SkillOpt's entry)."""

from __future__ import annotations

from attrs import frozen

from stratune_core.methods.event_view import EventView, Row, short_id


@frozen(kw_only=True)
class EditsSelected:
    """SkillOpt: a step's edit proposals, merged, ranked and clipped to the step's `limit`
    (the cosine schedule); `applied` of the selected edits applied to the skill. Don't
    subclass this."""

    round: int
    proposed: int
    merged: int
    limit: int
    applied: int


@frozen(kw_only=True)
class EpochReviewed:
    """SkillOpt at an epoch end: the previous epoch's skill against the current one on the same
    samples (the slow update's longitudinal comparison), and whether meta guidance was written.
    Don't subclass this."""

    epoch: int
    previous_id: str
    current_id: str
    improved: int
    regressed: int
    persistent_fail: int
    stable_success: int
    guidance: bool


def _selected_line(e: EditsSelected) -> str:
    return (f"{e.proposed} edits proposed, {e.merged} after merging, {e.applied} of at most "
            f"{e.limit} applied")


def _reviewed_line(e: EpochReviewed) -> str:
    memory = "; meta guidance written" if e.guidance else ""
    return (f"epoch {e.epoch + 1} review of {short_id(e.previous_id)} -> "
            f"{short_id(e.current_id)}: {e.improved} improved, {e.regressed} regressed, "
            f"{e.persistent_fail} still failing, {e.stable_success} still solved{memory}")


def _reviewed_row(e: EpochReviewed) -> Row:
    return (f"epoch {e.epoch + 1} review", short_id(e.current_id), "", "",
            f"+{e.improved} -{e.regressed}" + (", guidance" if e.guidance else ""))


VIEWS = (
    EventView(event=EditsSelected, line=_selected_line),
    EventView(event=EpochReviewed, line=_reviewed_line, row=_reviewed_row, step=True),
)
