"""The summary's parts: header, round table, token/cost table (paper Table 8)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich import box
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from replay.serde import Manifest
from replay.viewer.model import CandidateView, RoundView, RunView
from replay.viewer.style import clip, operator_label, short_id, signed, verdict_text
from stratune_core.evaluation import Outcome


def header(view: RunView, manifest: Manifest | None,
           evaluation: Mapping[str, Any] | None = None) -> RenderableType:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    started = view.started
    task = started.task if started else "?"
    if manifest is not None:
        task = f"{task} ({manifest.task.spec})" if manifest.task.spec != task else task
        grid.add_row("task", task)
        grid.add_row("models", f"target {manifest.target} · optimizer {manifest.optimizer}")
        grid.add_row("seed", f"{manifest.seed} · profile {manifest.profile} · selector "
                             f"{manifest.config.selector}")
    else:
        grid.add_row("task", task)
    limit = started.budget if started else 0
    grid.add_row("budget used", f"{view.spent}/{limit} executions" if limit else str(view.spent))
    accepted = sum(1 for r in view.rounds if r.accepted)
    grid.add_row("rounds", f"{len(view.rounds)} ({accepted} accepted)")
    grid.add_row("final skill", final_line(view, evaluation))
    return grid


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


def _lb(outcome: Outcome | None) -> str:
    if outcome is None:
        return "—"
    values = {c.name: c.value for c in outcome.checks}
    if "lb_d_s" not in values and "lb_d_du" not in values:
        return "—"
    return f"{values.get('lb_d_s', 0.0):.2f}/{values.get('lb_d_du', 0.0):.2f}"


def _wldu(outcome: Outcome | None) -> str:
    if outcome is None:
        return "—"
    s = outcome.stats
    return f"{s.wins}/{s.losses}/{s.counts.D}/{s.counts.U}"


def _cell(candidates: tuple[CandidateView, ...], fn: Any) -> Text:
    """One line per candidate, so a round's candidates line up across the columns."""
    if not candidates:
        return Text("—", style="dim")
    parts = [fn(c) for c in candidates]
    return Text("\n").join(p if isinstance(p, Text) else Text(str(p)) for p in parts)


def round_table(view: RunView) -> Table:
    table = Table(title="rounds", header_style="bold", box=box.SIMPLE_HEAD, padding=(0, 0),
                  show_edge=False)
    for name, justify in (("#", "right"), ("operator", "left"), ("why", "left"),
                          ("cand.", "left"), ("scr. Δ", "right"), ("W/L/D/U", "right"),
                          ("LB S/DU", "right"), ("val. Δ", "right"), ("verdict", "left"),
                          ("spent", "right")):
        table.add_column(name, justify=justify, no_wrap=True, min_width=min(len(name), 8),
                         max_width=20 if name == "why" else None)
    for group in _grouped(view.rounds):
        table.add_row(*_round_row(group))
    return table


def _idle(r: RoundView) -> bool:
    return r.operator is None and not r.candidates and not r.invalid


def _grouped(rounds: tuple[RoundView, ...]) -> list[tuple[RoundView, ...]]:
    """Runs of consecutive idle rounds skipped for the same reason share one row."""
    groups: list[list[RoundView]] = []
    for r in rounds:
        last = groups[-1][-1] if groups else None
        if last is not None and _idle(r) and _idle(last) and r.skipped == last.skipped:
            groups[-1].append(r)
        else:
            groups.append([r])
    return [tuple(g) for g in groups]


def _round_row(group: tuple[RoundView, ...]) -> tuple[Text | str, ...]:
    r, end = group[0], group[-1]
    number = str(r.index + 1) if len(group) == 1 else f"{r.index + 1}–{end.index + 1}"
    op: Text | str = Text("—", style="dim")
    why = "skipped: " + ", ".join(r.skipped) if r.skipped else ""
    if r.operator is not None:
        op = operator_label(r.operator.strategy, r.operator.form)
        why = r.operator.why or str(r.operator.source)
    cands = r.candidates
    names = _cell(cands, lambda c: c.candidate_id[:6])
    if r.invalid:  # on a line of its own, below the candidates' lines
        invalid = Text(f"+{len(r.invalid)} invalid", style="red")
        names = Text("\n").join((names, invalid)) if cands else invalid
    return (
        number, op, Text(clip(why, 20), style="dim" if r.operator is None else ""), names,
        _cell(cands, lambda c: signed(c.screening.stats.gain) if c.screening else "—"),
        _cell(cands, lambda c: _wldu(c.screening)),
        _cell(cands, lambda c: _lb(c.screening)),
        _cell(cands, lambda c: signed(c.validation.stats.gain) if c.validation else "—"),
        _cell(cands, lambda c: verdict_text(c.verdict)),
        str(end.spent_end),
    )


def cost_table(usage: Mapping[str, Any] | None) -> RenderableType:
    """Tokens and cost by call kind from usage.json (cost of cache hits: what they cost when
    they were recorded)."""
    if not usage or not usage.get("rows"):
        return Text("no usage.json in the run directory (the run did not finish)", style="dim")
    table = Table(title="tokens and cost by call kind", header_style="bold", box=box.SIMPLE_HEAD,
                  pad_edge=False)
    for name in ("call kind", "model", "calls", "cached", "input tok.", "output tok.", "cost $"):
        table.add_column(name, justify="left" if name in ("call kind", "model") else "right")
    totals = [0, 0, 0, 0, 0.0]
    for row in usage["rows"]:
        tokens = _tokens(row.get("usage", {}), row.get("cached_usage", {}))
        cost = row.get("cost_usd", 0.0) + row.get("would_have_cost_usd", 0.0)
        values = (row.get("calls", 0), row.get("cache_hits", 0), tokens[0], tokens[1], cost)
        totals = [a + b for a, b in zip(totals, values, strict=True)]
        table.add_row(str(row.get("kind")), clip(str(row.get("model")), 28),
                      *(f"{v:,}" for v in values[:4]),
                      f"{cost:.4f}" if row.get("priced", True) else "unpriced")
    priced = all(row.get("priced", True) for row in usage["rows"])
    table.add_row("total", "", *(f"{v:,}" for v in totals[:4]),
                  f"{totals[4]:.4f}" + ("" if priced else " +unpriced"), style="bold")
    if batched := sum(row.get("batch_calls", 0) for row in usage["rows"]):
        # The part of the paid calls sent through the Message Batches API (batch=on), at 50%.
        tokens = [_tokens(row.get("batch_usage", {}), {}) for row in usage["rows"]]
        table.add_row("Batch API", "", f"{batched:,}", "",
                      f"{sum(t[0] for t in tokens):,}", f"{sum(t[1] for t in tokens):,}",
                      f"{sum(row.get('batch_cost_usd', 0.0) for row in usage['rows']):.4f}",
                      style="dim")
    clamped = [f"{row.get('kind')} {row['clamped_calls']:,} of {row.get('calls', 0):,} calls "
               f"(down to {row.get('clamped_min', 0):,})"
               for row in usage["rows"] if row.get("clamped_calls")]
    if clamped:
        table.caption = "max_tokens lowered to fit the model's context: " + "; ".join(clamped)
    return table


def _tokens(paid: Mapping[str, int], cached: Mapping[str, int]) -> tuple[int, int]:
    def total(key: str) -> int:
        return int(paid.get(key, 0)) + int(cached.get(key, 0))

    return (total("input_tokens") + total("cache_read_tokens") + total("cache_write_tokens"),
            total("output_tokens"))
