"""A table that reads at any width: numbers are never cut.

Laid out when printed, for the width the console gives (a terminal, a pipe at $COLUMNS, a
notebook, an export): at full width when that fits; else text columns wrap (never below their
longest word); else the table splits into parts that each repeat the key columns (the row's
name) and fit; and on a console too narrow for even that, each row is stacked as
`column: value` lines. A number is one word and is never wrapped or shortened.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from attrs import field, frozen
from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

PAD = 2  # a column's padding, one space each side
EDGE = 2  # the table's outer edges (space characters in SIMPLE_HEAD)
GAP = 1  # between two columns


@frozen(kw_only=True)
class FitColumn:
    header: str
    numeric: bool = False  # right-aligned; its cells are never wrapped (the width holds them)


def _longest_word(text: str | Text) -> int:
    plain = text.plain if isinstance(text, Text) else text
    return max((cell_len(w) for w in plain.split()), default=0)


def _cells(rows: Sequence[Sequence[str | Text]]) -> tuple[tuple[Text, ...], ...]:
    """A plain string is read as console markup, as rich's own `add_row` reads it; a `Text`
    keeps its style (a ranked cell's emphasis)."""
    return tuple(tuple(c if isinstance(c, Text) else Text.from_markup(c) for c in row)
                 for row in rows)


@frozen(kw_only=True)
class FitTable:
    """`key` leading columns name a row; they are repeated in every part of a split table."""

    columns: tuple[FitColumn, ...] = field(converter=tuple)
    rows: tuple[tuple[Text, ...], ...] = field(converter=_cells)
    key: int = 1

    def natural(self, i: int) -> int:
        return max([cell_len(self.columns[i].header), *(r[i].cell_len for r in self.rows)])

    def least(self, i: int) -> int:
        """The narrowest the column may get: a whole number, or the longest word of text."""
        words = [_longest_word(self.columns[i].header)]
        if self.columns[i].numeric:
            words += [r[i].cell_len for r in self.rows]
        else:
            words += [_longest_word(r[i]) for r in self.rows]
        return max(1, *words)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        everything = tuple(range(len(self.columns)))
        if _span(self, everything, self.least) <= width:
            yield self._table(everything, width)
            return
        keys = everything[:self.key]
        parts = _parts(self, keys, everything[self.key:], width)
        if parts:
            for i, part in enumerate(parts):
                if i:
                    yield Text("")
                yield self._table((*keys, *part), width)
            return
        yield from self._stacked()

    def _table(self, shown: Sequence[int], width: int) -> Table:
        widths = _widths(self, shown, width)
        table = Table(box=box.SIMPLE_HEAD, pad_edge=True, expand=False)
        for i, w in zip(shown, widths, strict=True):
            column = self.columns[i]
            table.add_column(column.header, width=w,
                             justify="right" if column.numeric else "left",
                             overflow="fold")
        for row in self.rows:
            table.add_row(*(row[i] for i in shown))
        return table

    def _stacked(self) -> Iterator[Text]:
        """Each row as `column: value` lines; a console narrower than any table."""
        for n, row in enumerate(self.rows):
            if n:
                yield Text("")
            for column, value in zip(self.columns, row, strict=True):
                yield Text.assemble((f"{column.header}: ", "bold"), value)


def _span(table: FitTable, shown: Sequence[int], measure: Callable[[int], int]) -> int:
    return sum(measure(i) for i in shown) + PAD * len(shown) + GAP * (len(shown) - 1) + EDGE


def _widths(table: FitTable, shown: Sequence[int], width: int) -> list[int]:
    """Natural widths, then the widest text column narrowed one cell at a time until the
    table fits (never below `least`)."""
    widths = [table.natural(i) for i in shown]
    floors = [table.least(i) for i in shown]
    room = width - (PAD * len(shown) + GAP * (len(shown) - 1) + EDGE)
    while sum(widths) > room:
        shrinkable = [k for k in range(len(shown)) if widths[k] > floors[k]]
        if not shrinkable:
            break
        widest = max(shrinkable, key=lambda k: widths[k])
        widths[widest] -= 1
    return widths


def _parts(table: FitTable, keys: Sequence[int], rest: Sequence[int],
           width: int) -> list[tuple[int, ...]]:
    """The other columns in order, as many in each part as fit beside the key columns; none
    when some column cannot fit beside the keys even alone."""
    if any(_span(table, (*keys, i), table.least) > width for i in rest):
        return []
    parts: list[tuple[int, ...]] = []
    part: list[int] = []
    for i in rest:
        if part and _span(table, (*keys, *part, i), table.least) > width:
            parts.append(tuple(part))
            part = []
        part.append(i)
    if part:
        parts.append(tuple(part))
    return parts
