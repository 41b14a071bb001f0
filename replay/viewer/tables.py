"""The summary's header and its token/cost table (paper Table 8); the round table is in
`rounds.py`.

Costs are shown as they were: "paid $" is what the calls answered by a model cost (its total
is usage.json's total `cost_usd`); "cache $" is what the calls answered from the cache had cost
when they were recorded, shown apart and never added to what was paid. Test-split calls
(`train --test-eval`) are their own call kind, outside the training budget.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich import box
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from replay.serde import Manifest
from replay.viewer.model import RunView
from replay.viewer.style import short_id

KIND_LABEL = {
    "target_execution": "target exec.",
    "strategy_selection": "strategy sel.",
    "candidate_generation": "candidate gen.",
    "feedback_preparation": "feedback prep.",
    "test_evaluation": "test eval.",
}
OUTSIDE_BUDGET = "test_evaluation"


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
        grid.add_row("seed", Text(f"{manifest.seed} · profile {manifest.profile} · selector "
                                  f"{manifest.config.selector}"))
    else:
        grid.add_row("task", Text(task))
    limit = started.budget if started else 0
    grid.add_row("budget used", f"{view.spent}/{limit} executions" if limit else str(view.spent))
    accepted = sum(1 for r in view.rounds if r.accepted)
    grid.add_row("rounds", f"{len(view.rounds)} ({accepted} accepted)")
    if usage and usage.get("rows"):
        grid.add_row("cost", cost_line(usage))
    grid.add_row("final skill", final_line(view, evaluation))
    return grid


def cost_line(usage: Mapping[str, Any]) -> Text:
    total = _totals(usage["rows"])
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


def _totals(rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    return {
        "paid_calls": sum(int(r.get("paid_calls", 0)) for r in rows),
        "hits": sum(int(r.get("cache_hits", 0)) for r in rows),
        "paid": sum(float(r.get("cost_usd", 0.0)) for r in rows),
        "cached": sum(float(r.get("would_have_cost_usd", 0.0)) for r in rows),
        "priced": all(r.get("priced", True) for r in rows),
    }


def cost_table(usage: Mapping[str, Any] | None) -> RenderableType:
    """Tokens and cost by call kind and model, from usage.json."""
    if not usage or not usage.get("rows"):
        return Text("no usage.json in the run directory (the run did not finish)", style="dim")
    table = Table(title="tokens and cost by call kind", header_style="bold", box=box.SIMPLE_HEAD,
                  pad_edge=False, show_edge=False, padding=(0, 0), caption_justify="left")
    table.add_column("call kind ", no_wrap=True, min_width=15)
    table.add_column("model", overflow="ellipsis", no_wrap=True, min_width=8)
    for name, width in (("paid", 5), ("cached", 6), ("in tok.", 9), ("out tok.", 8),
                        ("paid $", 8), ("cache $", 8)):
        table.add_column(name, justify="right", no_wrap=True, min_width=width)
    rows = usage["rows"]
    for row in rows:
        tokens = _tokens(row.get("usage", {}), row.get("cached_usage", {}))
        priced = row.get("priced", True)
        kind = str(row.get("kind"))
        table.add_row(
            Text(KIND_LABEL.get(kind, kind), style="dim" if kind == OUTSIDE_BUDGET else ""),
            str(row.get("model")), f"{int(row.get('paid_calls', 0)):,}",
            f"{int(row.get('cache_hits', 0)):,}", f"{tokens[0]:,}", f"{tokens[1]:,}",
            _dollars(row.get("cost_usd", 0.0), priced),
            _dollars(row.get("would_have_cost_usd", 0.0), priced))
    total = _totals(rows)
    tokens = [sum(_tokens(r.get("usage", {}), r.get("cached_usage", {}))[i] for r in rows)
              for i in (0, 1)]
    table.add_row("total", "", f"{total['paid_calls']:,}", f"{total['hits']:,}",
                  f"{tokens[0]:,}", f"{tokens[1]:,}", f"{total['paid']:.4f}",
                  f"{total['cached']:.4f}", style="bold")
    notes = ["paid $: what this run's calls cost (usage.json)", "cache $: the value of the "
             "answers read from the cache, not paid again"]
    if any(r.get("kind") == OUTSIDE_BUDGET for r in rows):
        notes.append("test eval.: the test-split scores, outside the budget")
    if not total["priced"]:
        notes.append("unpriced: no price for the model, counted as 0")
    table.caption = " · ".join(notes)
    return table


def _dollars(value: Any, priced: bool) -> str:
    return f"{float(value):.4f}" if priced else "unpriced"


def _tokens(paid: Mapping[str, int], cached: Mapping[str, int]) -> tuple[int, int]:
    def total(key: str) -> int:
        return int(paid.get(key, 0)) + int(cached.get(key, 0))

    return (total("input_tokens") + total("cache_read_tokens") + total("cache_write_tokens"),
            total("output_tokens"))
