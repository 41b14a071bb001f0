"""SpreadsheetBench cell comparison over already-loaded cell values (docs/design.md, "Tasks").

A workbook here is `Mapping[sheet name, Mapping[(row, col), value]]` with 1-based indices,
values as openpyxl gives them with `data_only=True` (formulas the code wrote are not
recalculated, so they read as None and mismatch, as in the official checker).

`values_equal` rules: None and "" are equal; numbers, bools and numeric strings compare as
floats rounded to 2 decimals; datetimes/dates compare as Excel serials rounded to whole days;
times compare as "HH:MM" (the string form without its last 3 characters); anything else
must have the same type and be equal.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping

from attrs import field, frozen

Cells = Mapping[tuple[int, int], object]
Workbook = Mapping[str, Cells]
_EPOCH = dt.datetime(1899, 12, 30)
_REF = re.compile(r"^([A-Za-z]*)(\d*)$")
MAX_CELLS = 2_000_000  # answer cells, or cells of a gold sheet, one check may visit


class RangeError(ValueError):
    """An answer position that names no sheet or cell of the workbook."""


def _canon(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, bool | int | float):
        return round(float(value), 2)
    if isinstance(value, dt.datetime):
        return float(round((value - _EPOCH).total_seconds() / 86400.0))
    if isinstance(value, dt.date):
        return float((dt.datetime(value.year, value.month, value.day) - _EPOCH).days)
    if isinstance(value, dt.time):
        return str(value)[:-3]
    if isinstance(value, str):
        try:
            return round(float(value.strip()), 2) if value.strip() else value
        except ValueError:
            return value
    return value


def values_equal(a: object, b: object) -> bool:
    ca, cb = _canon(a), _canon(b)
    return type(ca) is type(cb) and ca == cb


def column_index(letters: str) -> int:
    n = 0
    for ch in letters.upper():
        n = n * 26 + (ord(ch) - 64)
    return n


def column_letters(index: int) -> str:
    out = ""
    while index > 0:
        index, rem = divmod(index - 1, 26)
        out = chr(65 + rem) + out
    return out


def _norm_sheet(name: str) -> str:
    return "".join(name.casefold().split())


def resolve_sheet(name: str | None, sheets: tuple[str, ...]) -> str:
    """Exact name, then case/space-insensitive, then the only sheet; None means the first."""
    if not sheets:
        raise RangeError("workbook has no sheets")
    if name is None:
        return sheets[0]
    if name in sheets:
        return name
    matches = [s for s in sheets if _norm_sheet(s) == _norm_sheet(name)]
    if matches:
        return matches[0]
    if len(sheets) == 1:
        return sheets[0]
    raise RangeError(f"sheet {name!r} not found (sheets: {', '.join(sheets)})")


def split_position(position: str) -> tuple[tuple[str | None, str], ...]:
    """`"'Sheet 1'!A1:B2, C3"` -> ((sheet, "A1:B2"), (None, "C3")), tolerating the stray
    quotes and spaces of the official data ("'CS!'B1:B8", "MAIN'!A1:E9", "B1: B8")."""
    parts: list[tuple[str | None, str]] = []
    for raw in position.split(","):
        raw = raw.strip()
        if not raw:
            continue
        sheet: str | None = None
        if "!" in raw:
            left, raw = raw.rsplit("!", 1)
            sheet = left.strip().strip("'\"").strip() or None
        rng = raw.replace("$", "").replace(" ", "").strip("'\"")
        if not rng:
            raise RangeError(f"empty range in {position!r}")
        parts.append((sheet, rng))
    if not parts:
        raise RangeError(f"no range in answer position {position!r}")
    return tuple(parts)


def _extent(cells: Cells) -> tuple[int, int]:
    rows = max((r for r, _ in cells), default=1)
    cols = max((c for _, c in cells), default=1)
    return rows, cols


def expand_range(rng: str, extent: tuple[int, int], *,
                 max_cells: int = MAX_CELLS) -> tuple[tuple[int, int], ...]:
    """Cells of "A1", "A1:C3", "A:C" (whole columns), "2:5" (whole rows), "BD2:308"."""
    ends = rng.split(":")
    if len(ends) > 2:
        raise RangeError(f"bad range {rng!r}")
    parsed = []
    for end in ends:
        m = _REF.match(end)
        if not m or not (m.group(1) or m.group(2)):
            raise RangeError(f"bad range {rng!r}")
        parsed.append((m.group(1), m.group(2)))
    (c1, r1), (c2, r2) = parsed[0], parsed[-1]
    # A missing part on one end borrows it from the other ("BD2:308" is BD2:BD308).
    c2, r2 = c2 or (c1 if r2 and r1 else ""), r2 or (r1 if c2 and c1 else "")
    c1, r1 = c1 or (c2 if r1 and r2 else ""), r1 or (r2 if c1 and c2 else "")
    max_row, max_col = extent
    col_lo = column_index(c1) if c1 else 1
    col_hi = column_index(c2) if c2 else max_col
    row_lo = int(r1) if r1 else 1
    row_hi = int(r2) if r2 else max_row
    col_lo, col_hi = sorted((col_lo, col_hi))
    row_lo, row_hi = sorted((row_lo, row_hi))
    count = (row_hi - row_lo + 1) * (col_hi - col_lo + 1)
    if count > max_cells:
        raise RangeError(f"range {rng!r} spans {count} cells, over the limit of {max_cells}")
    return tuple((r, c) for r in range(row_lo, row_hi + 1) for c in range(col_lo, col_hi + 1))


@frozen(kw_only=True)
class CellReport:
    correct: int
    total: int
    mismatches: tuple[str, ...] = field(default=(), converter=tuple)  # first few, for feedback
    error: str = ""

    @property
    def passed(self) -> bool:
        return not self.error and self.total > 0 and self.correct == self.total


Target = tuple[str, str, tuple[int, int]]  # gold sheet, output sheet, (row, col)


def answer_cells(position: str, gold: Workbook, output_sheets: tuple[str, ...], *,
                 max_cells: int = MAX_CELLS) -> tuple[Target, ...]:
    """The cells a check reads, before any output cell is read; RangeError on bad metadata
    or when they number more than `max_cells`."""
    targets: list[Target] = []
    for sheet, rng in split_position(position):
        gold_sheet = resolve_sheet(sheet, tuple(gold))
        out_sheet = resolve_sheet(gold_sheet, output_sheets)
        cells = expand_range(rng, _extent(gold[gold_sheet]), max_cells=max_cells - len(targets))
        targets.extend((gold_sheet, out_sheet, cell) for cell in cells)
    return tuple(targets)


def compare(position: str, gold: Workbook, output: Workbook, *, show: int = 5) -> CellReport:
    """Compare the answer cells of `output` with `gold`; never raises on bad metadata."""
    try:
        targets = answer_cells(position, gold, tuple(output))
    except RangeError as exc:
        return CellReport(correct=0, total=0, error=str(exc))
    correct, mismatches = 0, []
    for gold_sheet, out_sheet, cell in targets:
        want, got = gold[gold_sheet].get(cell), output[out_sheet].get(cell)
        if values_equal(got, want):
            correct += 1
        elif len(mismatches) < show:
            ref = f"{gold_sheet}!{column_letters(cell[1])}{cell[0]}"
            mismatches.append(f"{ref}: got {got!r:.40}, expected {want!r:.40}")
    return CellReport(correct=correct, total=len(targets), mismatches=tuple(mismatches))
