"""The round table, laid out for the width it is printed at.

Round, operator, screening and validation gains, verdict and budget spent are always shown in
full. The other columns go first when the table does not fit, in this order: the selection
reasoning ("why", which `view --round N` shows in full), the Wilson lower bounds, the
win/loss/regression counts, the candidate ids. At 80 columns a table keeps all but "why".
"""

from __future__ import annotations

from collections.abc import Callable

from attrs import frozen
from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from replay.viewer.model import CandidateView, RoundView, RunView
from replay.viewer.style import clip, operator_label, signed, verdict_text
from stratune_core.evaluation import Outcome

WHY_MIN, WHY_MAX = 12, 40
GAP = 1  # SIMPLE_HEAD separates columns by one space


@frozen
class _Column:
    name: str
    justify: str
    drop_rank: int  # the lowest rank is dropped first; 0 = never


COLUMNS = (
    _Column("#", "right", 0),
    _Column("operator", "left", 0),
    _Column("why", "left", 1),
    _Column("cand.", "left", 4),
    _Column("scr. Δ", "right", 0),
    _Column("W/L/D/U", "right", 3),
    _Column("LB S/DU", "right", 2),
    _Column("val. Δ", "right", 0),
    _Column("verdict", "left", 0),
    _Column("spent", "right", 0),
)


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


def _lines(candidates: tuple[CandidateView, ...], fn: Callable[[CandidateView], Text | str],
           extra: Text | None = None) -> Text:
    """One line per candidate, so a round's candidates line up across the columns; `extra`
    (the invalid count) on a last line of its own."""
    parts = [fn(c) for c in candidates]
    texts = [p if isinstance(p, Text) else Text(p) for p in parts]
    if extra is not None:
        texts.append(extra)
    return Text("\n").join(texts) if texts else Text("—", style="dim")


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


def _row(group: tuple[RoundView, ...]) -> dict[str, Text]:
    r, end = group[0], group[-1]
    number = str(r.index + 1) if len(group) == 1 else f"{r.index + 1}–{end.index + 1}"
    op = Text("—", style="dim")
    why = Text("skipped: " + ", ".join(r.skipped) if r.skipped else "", style="dim")
    if r.operator is not None:
        op = operator_label(r.operator.strategy, r.operator.form)
        why = Text(" ".join((r.operator.why or str(r.operator.source)).split()))
    cands = r.candidates
    invalid = Text(f"+{len(r.invalid)} invalid", style="red") if r.invalid else None
    blank = Text("") if invalid is not None and cands else None
    return {
        "#": Text(number),
        "operator": op,
        "why": why,
        "cand.": _lines(cands, lambda c: c.candidate_id[:6], blank),
        "scr. Δ": _lines(cands, lambda c: signed(c.screening.stats.gain) if c.screening else "—",
                         blank),
        "W/L/D/U": _lines(cands, lambda c: _wldu(c.screening), blank),
        "LB S/DU": _lines(cands, lambda c: _lb(c.screening), blank),
        "val. Δ": _lines(cands, lambda c: signed(c.validation.stats.gain) if c.validation
                         else "—", blank),
        "verdict": _lines(cands, lambda c: verdict_text(c.verdict), invalid),
        "spent": Text(str(end.spent_end)),
    }


def _width(text: Text) -> int:
    return max((len(line) for line in text.plain.split("\n")), default=0)


class RoundTable:
    """A renderable: the columns are chosen when rich knows the width."""

    def __init__(self, view: RunView) -> None:
        self.rows = [_row(g) for g in _grouped(view.rounds)]

    def columns_for(self, max_width: int) -> tuple[tuple[str, ...], int]:
        """The column names that fit in `max_width`, and the width left for "why"."""
        natural = {c.name: max([len(c.name), *(_width(row[c.name]) for row in self.rows)])
                   for c in COLUMNS}
        shown = [c for c in COLUMNS]
        while True:
            fixed = sum(natural[c.name] for c in shown if c.name != "why")
            room = max_width - fixed - GAP * (len(shown) - 1)
            has_why = any(c.name == "why" for c in shown)
            if (room >= WHY_MIN if has_why else room >= 0) or all(c.drop_rank == 0 for c in shown):
                return tuple(c.name for c in shown), min(max(room, 0), WHY_MAX,
                                                         natural["why"])
            shown.remove(min((c for c in shown if c.drop_rank), key=lambda c: c.drop_rank))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        names, why_width = self.columns_for(options.max_width)
        table = Table(title="rounds", header_style="bold", box=box.SIMPLE_HEAD, padding=(0, 0),
                      show_edge=False, collapse_padding=True)
        for column in COLUMNS:
            if column.name in names:
                is_why = column.name == "why"
                table.add_column(column.name, justify=column.justify,  # type: ignore[arg-type]
                                 no_wrap=True, overflow="ellipsis" if is_why else "fold",
                                 width=why_width if is_why else None,
                                 min_width=None if is_why else len(column.name))
        for row in self.rows:
            cells = [row[name] for name in names]
            if "why" in names:
                i = names.index("why")
                cells[i] = Text(clip(cells[i].plain, why_width), style=cells[i].style)
            table.add_row(*cells)
        yield table


def round_table(view: RunView) -> RoundTable:
    return RoundTable(view)
