"""The tables `compare` builds, independent of how they are printed: typed cells (a mean ± sd
over n runs, a number, a text), columns that know their format, rows that may open a section."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from typing import Any

from attrs import field, frozen

MISSING = "—"  # never 0: a run without a test score has no score


@frozen
class Stat:
    """Mean and sample standard deviation over n runs (sd needs n >= 2)."""

    mean: float | None
    sd: float | None
    n: int
    rank: int | None = None  # 1 best, 2 second best in its column (Table 2's marks)

    @classmethod
    def of(cls, values: Iterable[float | None]) -> Stat:
        present = [v for v in values if v is not None]
        if not present:
            return cls(None, None, 0)
        sd = statistics.stdev(present) if len(present) > 1 else None
        return cls(statistics.fmean(present), sd, len(present))


@frozen
class Column:
    title: str
    kind: str = "text"  # text | stat | number | int | percent | sign
    digits: int = 2


@frozen
class Row:
    cells: tuple[Any, ...] = field(converter=tuple)
    group: str | None = None  # a section title shown above the first row of its group


@frozen(kw_only=True)
class Table:
    id: str  # main, ablations, fixed_operators, bandits, tokens, cost_by_kind, sequences, budget, runs
    title: str
    columns: tuple[Column, ...] = field(converter=tuple)
    rows: tuple[Row, ...] = field(converter=tuple)
    notes: tuple[str, ...] = field(default=(), converter=tuple)


def fmt_number(value: float | None, digits: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    return f"{value:,.{digits}f}"


def fmt_stat(stat: Stat, digits: int, *, pm: str = " ± ") -> str:
    if stat.mean is None:
        return MISSING
    text = fmt_number(stat.mean, digits)
    if stat.sd is not None:
        text += pm + fmt_number(stat.sd, digits)
    return text + f" ({stat.n})"


def fmt_cell(value: Any, column: Column, *, pm: str = " ± ") -> str:
    if column.kind == "stat":
        return fmt_stat(value, column.digits, pm=pm)
    if column.kind in ("number", "percent"):
        return fmt_number(value, column.digits)
    if column.kind == "int":
        return MISSING if value is None else f"{value:,}"
    if column.kind == "sign":
        return MISSING if value is None else value
    return "" if value is None else str(value)


def sign_of(delta: float | None) -> str | None:
    if delta is None:
        return None
    if abs(delta) < 1e-9:
        return "="
    return "+" if delta > 0 else "−"
