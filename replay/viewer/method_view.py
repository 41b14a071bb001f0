"""`stratune view` of a baseline run: the method and its settings, the budget by purpose, one
row per step that proposed or chose a skill, the final skill and the cost table."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from replay.rundir.serde import Manifest
from replay.viewer.charts import HEIGHT, WIDTH
from replay.viewer.costs import cost_table
from replay.viewer.model import RunView
from replay.viewer.style import short_id
from replay.viewer.tables import cost_line
from stratune_core.methods.event_view import score as _score
from stratune_core.records.purposes import MethodPurpose, UpdateVerdict
from stratune_core.round.registry import EVENT_VIEWS
from stratune_core.state.events import (
    Event,
    FinalChosen,
    MethodStarted,
    SkillScored,
    TargetExecuted,
    UpdateDecided,
)


def method_summary(events: Sequence[Event], view: RunView, manifest: Manifest | None,
                   usage: Mapping[str, Any] | None,
                   evaluation: Mapping[str, Any] | None) -> RenderableType:
    started = next((e for e in events if isinstance(e, MethodStarted)), None)
    name = started.method.value if started else "baseline"
    return Group(
        Rule(Text(f"{name} run", style="bold")),
        _header(events, view, manifest, usage, evaluation, started),
        Text(""),
        steps_table(events),
        Text(""),
        score_curve(events, view.started.budget if view.started else 0),
        Text(""),
        cost_table(usage),
    )


def _header(events: Sequence[Event], view: RunView, manifest: Manifest | None,
            usage: Mapping[str, Any] | None, evaluation: Mapping[str, Any] | None,
            started: MethodStarted | None) -> RenderableType:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    if started is not None:
        grid.add_row("method", Text(f"{started.method.value} {started.settings}"))
    if manifest is not None:
        grid.add_row("task", Text(manifest.task.spec))
        grid.add_row("target", Text(manifest.target))
        grid.add_row("optimizer", Text(manifest.optimizer))
        grid.add_row("seed", Text(str(manifest.seed)))
    limit = view.started.budget if view.started else 0
    grid.add_row("budget used", f"{view.spent}/{limit} executions")
    by_purpose: Counter[str] = Counter()
    for e in events:
        if isinstance(e, TargetExecuted):
            by_purpose[e.purpose.value] += len(e.sample_ids)
    if by_purpose:
        grid.add_row("by purpose", " · ".join(f"{k} {v}" for k, v in sorted(by_purpose.items())))
    if usage and usage.get("rows"):
        grid.add_row("cost", cost_line(usage))
    grid.add_row("final skill", _final_line(view, evaluation))
    return grid


def _final_line(view: RunView, evaluation: Mapping[str, Any] | None) -> Text:
    if view.finished is None:
        return Text("run not finished", style="yellow")
    final_id = view.finished.final_id
    initial = view.started.initial_skill_id if view.started else None
    origin = "the initial skill" if final_id == initial else "learnt"
    line = Text(f"{short_id(final_id)} ({origin}; stop: {view.finished.reason.value})")
    scores = (evaluation or {}).get("scores", {})
    if final_id in scores:
        line.append(f" · {(evaluation or {}).get('split', 'test')} score "
                    f"{scores[final_id]:.3f}", style="bold")
        if initial in scores and initial != final_id:
            line.append(f" (initial {scores[initial]:.3f})")
    return line


def steps_table(events: Sequence[Event]) -> RenderableType:
    """One row per event that proposed, revised or chose skills."""
    table = Table(title="steps", title_justify="left", show_edge=False)
    for column in ("#", "what", "skill", "score", "reference", "outcome"):
        table.add_column(column)
    rows = step_rows(events)
    for number, row in enumerate(rows, start=1):
        table.add_row(str(number), *row)
    if not rows:
        return Text("no steps recorded", style="dim")
    return table


def step_rows(events: Sequence[Event]) -> list[tuple[str, ...]]:
    """(what, skill, score, reference, outcome) of each event that proposed, revised or chose
    skills, in order (the steps table's rows; the dashboard shows the same)."""
    return [row for e in events if (row := _row(e)) is not None]


def _row(e: Event) -> tuple[str, ...] | None:
    if isinstance(e, UpdateDecided):
        skill = short_id(e.candidate_id) if e.candidate_id else ""
        return (f"update (round {e.round + 1})", skill, _score(e.score),
                _score(e.reference_score), e.verdict.value + (f": {e.detail}" if e.detail else ""))
    if isinstance(e, FinalChosen):
        scores = ", ".join(f"{short_id(s)} {v:.3f}" for s, v in zip(e.skill_ids, e.scores,
                                                                     strict=True))
        return ("final choice", short_id(e.final_id), "", "", scores)
    view = EVENT_VIEWS.get(type(e))  # a method's own event, shown as its entry says
    return view.row(e) if view is not None and view.row is not None else None


def curve_points(events: Sequence[Event]) -> list[tuple[int, float, bool]]:
    """(executions spent, the current skill's internal score, whether an update was kept just
    then): the initial skill's first validation score, then one point per decided update."""
    points: list[tuple[int, float, bool]] = []
    spent = 0
    for e in events:
        if isinstance(e, TargetExecuted):
            spent = e.spent
        elif isinstance(e, SkillScored) and not points and e.purpose is MethodPurpose.VALIDATION:
            points.append((spent, e.mean, False))
        elif isinstance(e, UpdateDecided) and points:
            kept = e.verdict is UpdateVerdict.KEPT
            value = e.score if kept and e.score is not None else e.reference_score
            if value is not None:
                points.append((spent, value, kept))
        elif points and (view := EVENT_VIEWS.get(type(e))) is not None and view.curve:
            moved = view.curve(e, max(p[1] for p in points))
            if moved is not None:
                points.append((spent, *moved))
    return points


def score_curve(events: Sequence[Event], limit: int, width: int = WIDTH,
                height: int = HEIGHT) -> RenderableType:
    """The current skill's score on the method's validation split against executions spent
    (▲: an update kept), on the axis of StraTune's trajectory chart."""
    points = curve_points(events)
    if len(points) < 2:
        return Text("no validated updates to draw (the method has no internal validation)",
                    style="dim")
    grid: list[list[str]] = [[" "] * width for _ in range(height)]
    for spent, score, kept in points:
        row = height - 1 - min(height - 1, int(score * (height - 1) + 0.5))
        col = min(width - 1, round(spent / max(1, limit) * (width - 1)))
        grid[row][col] = "▲" if kept else "●"
    lines = [Text("current skill's validation score against executions spent (▲: update kept)",
                  style="bold")]
    for i, row in enumerate(grid):
        label = f"{1 - i / (height - 1):4.2f} │" if i in (0, height // 2, height - 1) else "     │"
        lines.append(Text(label, style="dim") + Text("".join(row)))
    lines.append(Text("     └" + "─" * width, style="dim"))
    lines.append(Text(f"      0{'executions'.center(width - len(str(limit)) - 1)}{limit}",
                      style="dim"))
    return Group(*lines)
