"""Event-log lines of the events every baseline may emit (stratune_core/records/method_events.py),
registered on the viewer's `event_line`, and of each method's own events, read from the view its
registry entry carries (`methods/event_view.EventView`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text

from replay.viewer.events_log import event_line
from replay.viewer.style import short_id
from stratune_core.methods.event_view import EventView
from stratune_core.round.registry import EVENT_VIEWS
from stratune_core.state.events import (
    ExecutionsRefused,
    FinalChosen,
    GeneratorProposed,
    MethodStarted,
    SkillScored,
    SplitMade,
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
def _(e: FinalChosen) -> Text:
    scores = ", ".join(f"{short_id(s)} {v:.3f}" for s, v in zip(e.skill_ids, e.scores,
                                                                 strict=True))
    return Text(f"final choice {short_id(e.final_id)} among {scores}", style="bold")


@event_line.register
def _(e: GeneratorProposed) -> Text:
    made = short_id(e.candidate_id) if e.candidate_id else "nothing"
    detail = f" ({e.detail})" if e.detail else ""
    return Text(f"{e.generator.value} generator on {len(e.sample_ids)} executions: {made}{detail}")


def _own_line(view: EventView) -> Callable[[Any], Text]:
    return lambda e: Text(view.line(e), style=view.style)


for _view in EVENT_VIEWS.values():
    event_line.register(_view.event, _own_line(_view))
