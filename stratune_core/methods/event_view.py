"""How the shell shows one of a method's own events: `EventView`, pure text (no rendering
library), carried by the method's entry so the viewer, the progress display and the dashboard
read every method's events the same way and name none of them.

A method's own events live in its own module (`methods/<m>_events.py`) beside their views; the
events every baseline shares stay in `records/method_events.py` with their lines in the viewer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attrs import frozen

# A steps-table row: (what, skill, score, reference, outcome)
Row = tuple[str, str, str, str, str]


@frozen(kw_only=True)
class EventView:
    """`line`: the event log's line; `style`: its rich style name ("" plain, "dim", "bold");
    `row`: the steps table's row, None for an event that makes none; `step`: the event closes
    one step of the run (the progress display counts it); `curve(event, best)`: the score
    curve's (score, kept) after the event, given the best score so far, or None."""

    event: type
    line: Callable[[Any], str]
    style: str = ""
    row: Callable[[Any], Row | None] | None = None
    step: bool = False
    curve: Callable[[Any, float], tuple[float, bool] | None] | None = None


def short_id(skill_id: str) -> str:
    """A skill id as every view shows it: its first 8 hex digits."""
    return skill_id[:8]


def score(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"
