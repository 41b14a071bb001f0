"""The summary's header. The round table is in `rounds.py`, the cost table in `costs.py`.

Costs are shown as they were: what the calls answered by a model cost (the total is
usage.json's `cost_usd`), and apart from it what the calls answered from the cache had cost when
they were recorded, never added to what was paid.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from replay.rundir.serde import Manifest
from replay.stops.notes import stop_note
from replay.viewer.costs import totals
from replay.viewer.model import RunView
from replay.viewer.style import short_id


def header(view: RunView, manifest: Manifest | None, evaluation: Mapping[str, Any] | None = None,
           usage: Mapping[str, Any] | None = None) -> RenderableType:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    started = view.started
    task = started.task if started else "?"
    if manifest is not None:
        task = f"{task} ({manifest.task.spec})" if manifest.task.spec != task else task
        grid.add_row("task", Text(task))
        grid.add_row("target", Text(manifest.target))
        grid.add_row("optimizer", Text(manifest.optimizer))
        generator = getattr(manifest.method, "generator", None)
        choice = (f"generator {generator} (Table 4 hybrid)" if generator is not None
                  else f"selector {manifest.config.selector}")
        grid.add_row("seed", Text(f"{manifest.seed} · profile {manifest.profile} · {choice}"))
    else:
        grid.add_row("task", Text(task))
    limit = started.budget if started else 0
    grid.add_row("budget used", f"{view.spent}/{limit} executions" if limit else str(view.spent))
    accepted = sum(1 for r in view.rounds if r.accepted)
    grid.add_row("rounds", f"{len(view.rounds)} ({accepted} accepted)")
    if usage and usage.get("rows"):
        grid.add_row("cost", cost_line(usage))
    grid.add_row("final skill", final_line(view, evaluation))
    if view.finished is not None and (note := stop_note(view.finished.reason)) is not None:
        grid.add_row("stopped", Text(note, style="yellow"))
    return grid


def cost_line(usage: Mapping[str, Any]) -> Text:
    total = totals(usage["rows"])
    line = Text(f"${total['paid']:.4f} paid for {total['paid_calls']:,} calls")
    line.append(f" · {total['hits']:,} answered from the cache (${total['cached']:.4f} when "
                "recorded)", style="dim")
    if not total["priced"]:
        line.append(" · some models unpriced", style="yellow")
    return line


def final_line(view: RunView, evaluation: Mapping[str, Any] | None) -> Text:
    if view.finished is None:
        return Text("run not finished", style="yellow")
    final_id = view.finished.final_id
    initial = view.started.initial_skill_id if view.started else None
    origin = "the initial skill" if final_id == initial else _origin(view, final_id)
    line = Text(f"{short_id(final_id)} ({origin}; stop: {view.finished.reason.value})")
    scores = (evaluation or {}).get("scores", {})
    if final_id in scores:
        split = (evaluation or {}).get("split", "test")
        line.append(f" · {split} score {scores[final_id]:.3f}", style="bold")
        if initial in scores and initial != final_id:
            line.append(f" (initial {scores[initial]:.3f})")
    return line


def _origin(view: RunView, skill_id: str) -> str:
    for r in view.rounds:
        for c in r.candidates:
            if c.candidate_id == skill_id:
                return f"round {r.index + 1} {c.strategy.value}" + (
                    f"+{c.form.value}" if c.form else "")
    return "a saved candidate"


