"""The token and cost table (paper Table 8) from usage.json, laid out for the width it is
printed at: the model column takes what the others leave and is shortened with "…"; below that
the token columns give way before the calls and the dollars do.

"paid $" is what the calls answered by a model cost; its total is usage.json's `cost_usd`.
"cache $" is what the calls answered from the cache cost when they were recorded: shown apart,
never added to what was paid. `--test-eval` calls are their own kind, outside the budget."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

KIND_LABEL = {
    "target_execution": "target exec.",
    "strategy_selection": "strategy sel.",
    "candidate_generation": "candidate gen.",
    "feedback_preparation": "feedback prep.",
    "test_evaluation": "test eval.",
    "tool_call": "tool calls",
}
OUTSIDE_BUDGET = "test_evaluation"
COLUMNS = ("call kind", "model", "paid", "cached", "in tok.", "out tok.", "paid $", "cache $")
DROPPABLE = ("out tok.", "in tok.")  # in this order, when even a short model column won't fit
MODEL_MIN = 8


def totals(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {
        "paid_calls": sum(int(r.get("paid_calls", 0)) for r in rows),
        "hits": sum(int(r.get("cache_hits", 0)) for r in rows),
        "paid": sum(float(r.get("cost_usd", 0.0)) for r in rows),
        "cached": sum(float(r.get("would_have_cost_usd", 0.0)) for r in rows),
        "priced": all(r.get("priced", True) for r in rows),
    }


class CostTable:
    def __init__(self, rows: Sequence[Mapping[str, Any]]) -> None:
        self.cells: list[dict[str, str]] = []
        self.styles: list[str] = []
        for row in rows:
            tokens = _tokens(row.get("usage", {}), row.get("cached_usage", {}))
            priced = row.get("priced", True)
            kind = str(row.get("kind"))
            self.cells.append(dict(zip(COLUMNS, (
                KIND_LABEL.get(kind, kind), str(row.get("model")),
                f"{int(row.get('paid_calls', 0)):,}", f"{int(row.get('cache_hits', 0)):,}",
                f"{tokens[0]:,}", f"{tokens[1]:,}",
                _dollars(row.get("cost_usd", 0.0), priced),
                _dollars(row.get("would_have_cost_usd", 0.0), priced)), strict=True)))
            self.styles.append("dim" if kind == OUTSIDE_BUDGET else "")
        total = totals(rows)
        tokens = [sum(_tokens(r.get("usage", {}), r.get("cached_usage", {}))[i] for r in rows)
                  for i in (0, 1)]
        self.cells.append(dict(zip(COLUMNS, (
            "total", "", f"{total['paid_calls']:,}", f"{total['hits']:,}", f"{tokens[0]:,}",
            f"{tokens[1]:,}", f"{total['paid']:.4f}", f"{total['cached']:.4f}"), strict=True)))
        self.styles.append("bold")
        if batched := sum(int(r.get("batch_calls", 0)) for r in rows):
            # The part of the paid calls sent through the Message Batches API (batch=on), at 50%.
            batch_tokens = [_tokens(r.get("batch_usage", {}), {}) for r in rows]
            self.cells.append(dict(zip(COLUMNS, (
                "Batch API", "", f"{batched:,}", "", f"{sum(t[0] for t in batch_tokens):,}",
                f"{sum(t[1] for t in batch_tokens):,}",
                f"{sum(float(r.get('batch_cost_usd', 0.0)) for r in rows):.4f}", ""),
                strict=True)))
            self.styles.append("dim")
        notes = ["paid $: what this run's calls cost (usage.json)", "cache $: the value of the "
                 "answers read from the cache, not paid again"]
        if batched:
            notes.append("the last row: the part of the paid calls sent as message batches, "
                         "at half price")
        if any(r.get("kind") == OUTSIDE_BUDGET for r in rows):
            notes.append("test eval.: the test-split scores, outside the budget")
        if not total["priced"]:
            notes.append("unpriced: no price for the model, counted as 0")
        if tools := [r for r in rows if r.get("kind") == "tool_call"]:
            seconds = sum(float(r.get("seconds", 0.0)) for r in tools)
            notes.append(f"tool calls: {seconds:.1f} s of tool time in the calls this run ran "
                         "(no tokens; a cached call costs no time)")
        if clamped := [f"{r.get('kind')} {int(r['clamped_calls']):,} of "
                       f"{int(r.get('calls', 0)):,} calls (down to {int(r.get('clamped_min', 0)):,})"
                       for r in rows if r.get("clamped_calls")]:
            notes.append("max_tokens lowered to fit the model's context: " + "; ".join(clamped))
        self.caption = " · ".join(notes)

    def layout(self, max_width: int) -> tuple[tuple[str, ...], int]:
        """The columns shown and the model column's width."""
        natural = {c: max(len(c), *(len(cells[c]) for cells in self.cells)) for c in COLUMNS}
        natural["call kind"] += 1  # a space before the model ids
        shown = list(COLUMNS)
        for drop in (None, *DROPPABLE):
            if drop is not None:
                shown.remove(drop)
            room = max_width - sum(natural[c] for c in shown if c != "model") - (len(shown) - 1)
            if room >= MODEL_MIN:
                break
        return tuple(shown), max(MODEL_MIN, min(room, natural["model"]))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        shown, model_width = self.layout(options.max_width)
        table = Table(title="tokens and cost by call kind", header_style="bold",
                      box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 0),
                      caption=self.caption, caption_justify="left")
        for name in shown:
            left = name in ("call kind", "model")
            table.add_column(name, justify="left" if left else "right", no_wrap=True,
                             width=model_width if name == "model" else None,
                             min_width=len(name) + (name == "call kind"))
        for cells, style in zip(self.cells, self.styles, strict=True):
            values = [_middle(cells[c], model_width) if c == "model" else cells[c] for c in shown]
            table.add_row(*(Text(v, style=style) for v in values))
        yield table


def _middle(text: str, width: int) -> str:
    """Shortened in the middle: model ids differ at their ends (size, quantisation, mode)."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


def cost_table(usage: Mapping[str, Any] | None) -> RenderableType:
    """Tokens and cost by call kind and model, from usage.json."""
    if not usage or not usage.get("rows"):
        return Text("no usage.json in the run directory (the run did not finish)", style="dim")
    return CostTable(usage["rows"])


def _dollars(value: Any, priced: bool) -> str:
    return f"{float(value):.4f}" if priced else "unpriced"


def _tokens(paid: Mapping[str, int], cached: Mapping[str, int]) -> tuple[int, int]:
    def total(key: str) -> int:
        return int(paid.get(key, 0)) + int(cached.get(key, 0))

    return (total("input_tokens") + total("cache_read_tokens") + total("cache_write_tokens"),
            total("output_tokens"))
