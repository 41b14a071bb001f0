"""Printing tables: rich (terminal), markdown, csv (mean, sd, n and, in a ranked table, the
rank's mark in their own columns; one block per table after a `# title` line), LaTeX (booktabs)
and JSON (the table records as data: a stat cell keeps its mean, sd, n and rank)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

from cattrs import Converter
from rich.console import Group, RenderableType
from rich.text import Text

from replay.compare.model import MISSING, Column, Row, Stat, Table, fmt_cell, fmt_number
from replay.compare.names import FORMATS
from replay.viewer.fit import FitColumn, FitTable

_MARKS = {"markdown": ("**{}**", "<u>{}</u>"), "latex": (r"\textbf{{{}}}", r"\underline{{{}}}")}


_RICH_MARKS = {1: "bold", 2: "underline"}

# Bold and underline vanish in a pipe, a log or a plain-text diff: the rank is also a character
# after the cell, in every format (in its own column in csv).
RANK_MARKS = {1: "*", 2: "†"}
_MARK_TEXT = {"markdown": {1: r"\*", 2: "†"},
              "latex": {1: r"\textsuperscript{*}", 2: r"\textsuperscript{\dag}"}}


def _rank(value: object) -> int | None:
    return value.rank if isinstance(value, Stat) else None


def _marked(text: str, rank: int | None, fmt: str) -> str:
    """A ranked cell (Table 2's best and second best) with its mark, in the format's own
    emphasis where it has one."""
    if rank not in RANK_MARKS:
        return text
    mark = _MARK_TEXT.get(fmt, RANK_MARKS)[rank]
    if fmt in _MARKS:
        text = _MARKS[fmt][rank - 1].format(text)
    return f"{text} {mark}"


def _sections(table: Table, fmt: str = "") -> list[tuple[str | None, list[list[str]]]]:
    """Rows as text (ranked cells in `fmt`'s emphasis), split where the group changes."""
    return [(group, [[_marked(fmt_cell(v, c), _rank(v), fmt)
                      for v, c in zip(row.cells, table.columns, strict=True)] for row in rows])
            for group, rows in _row_groups(table)]


def _row_groups(table: Table) -> list[tuple[str | None, list[Row]]]:
    out: list[tuple[str | None, list[Row]]] = []
    for row in table.rows:
        if not out or out[-1][0] != row.group:
            out.append((row.group, []))
        out[-1][1].append(row)
    return out


def rich_table(table: Table) -> RenderableType:
    """The title, then one block per section (its title above its own table). Each block is
    laid out for the width it is printed at (`FitTable`): numbers are never cut; the leading
    text columns (the row's names) are repeated when a block splits."""
    parts: list[RenderableType] = [Text(table.title, style="bold")]
    columns = [FitColumn(header=c.title, numeric=c.kind != "text") for c in table.columns]
    leading = next((i for i, c in enumerate(columns) if c.numeric), len(columns))
    for group, rows in _row_groups(table):
        if group is not None:
            parts.append(Text(group, style="italic"))
        cells = [[Text(_marked(fmt_cell(v, c), _rank(v), "rich"),
                       style=_RICH_MARKS.get(_rank(v), ""))
                  for v, c in zip(row.cells, table.columns, strict=True)] for row in rows]
        parts.append(FitTable(columns=columns, rows=cells, key=max(1, min(2, leading))))
    parts += [Text(note, style="dim") for note in table.notes]
    return Group(*parts, Text(""))


def markdown(table: Table) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    out = [f"**{table.title}**", "", line([c.title for c in table.columns]),
           line(["---" if c.kind == "text" else "---:" for c in table.columns])]
    for group, rows in _sections(table, "markdown"):
        if group is not None:
            out.append(line([f"*{group}*", *[""] * (len(table.columns) - 1)]))
        out += [line(cells) for cells in rows]
    out += [""] + [f"{note}  " for note in table.notes]
    return "\n".join(out).rstrip() + "\n"


def _csv_header(column: Column, ranked: bool) -> list[str]:
    if column.kind == "stat":
        return [f"{column.title} mean", f"{column.title} sd", f"{column.title} n",
                *([f"{column.title} rank"] if ranked else [])]
    return [column.title]


def _csv_cells(value: object, column: Column, ranked: bool) -> list[str]:
    if column.kind == "stat":
        assert isinstance(value, Stat)
        return ["" if value.mean is None else repr(round(value.mean, 6)),
                "" if value.sd is None else repr(round(value.sd, 6)), str(value.n),
                *([RANK_MARKS.get(value.rank or 0, "")] if ranked else [])]
    if value is None:
        return [""]
    if isinstance(value, float):
        return [repr(round(value, 6))]
    return [str(value)]


def csv_text(table: Table) -> str:
    """A stat column whose cells are ranked (Table 2's) gets a rank column holding the mark."""
    buffer = io.StringIO()
    buffer.write(f"# {table.title}\n")
    writer = csv.writer(buffer, lineterminator="\n")
    ranked = [any(_rank(row.cells[j]) is not None for row in table.rows)
              for j in range(len(table.columns))]
    writer.writerow(["group", *(h for c, r in zip(table.columns, ranked, strict=True)
                                for h in _csv_header(c, r))])
    for row in table.rows:
        writer.writerow([row.group or "", *(cell for value, column, r in
                                             zip(row.cells, table.columns, ranked, strict=True)
                                             for cell in _csv_cells(value, column, r))])
    return buffer.getvalue()


_LATEX = str.maketrans({"&": r"\&", "%": r"\%", "_": r"\_", "#": r"\#", "$": r"\$",
                        "ε": r"$\epsilon$", "Δ": r"$\Delta$", "—": "---", "±": r"$\pm$",
                        "✓": r"$\checkmark$", "−": "$-$", "†": r"\dag{}"})


def latex(table: Table) -> str:
    width = len(table.columns)
    align = "".join("l" if c.kind == "text" else "r" for c in table.columns)
    out = [r"\begin{table}[htbp]", r"\centering", r"\small",
           rf"\caption{{{table.title.translate(_LATEX)}}}", rf"\begin{{tabular}}{{{align}}}",
           r"\toprule", " & ".join(c.title.translate(_LATEX) for c in table.columns) + r" \\",
           r"\midrule"]
    for i, (group, rows) in enumerate(_sections(table, "latex")):
        if i:
            out.append(r"\midrule")
        if group is not None:
            out.append(rf"\multicolumn{{{width}}}{{l}}{{\textit{{{group.translate(_LATEX)}}}}} \\")
        for cells in rows:
            out.append(" & ".join(c.translate(_LATEX) for c in cells) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}"]
    out += [rf"\par\footnotesize {note.translate(_LATEX)}" for note in table.notes]
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"


def render_text(tables: Sequence[Table], fmt: str) -> str:
    if fmt == "markdown":
        return "\n".join(markdown(t) for t in tables)
    if fmt == "csv":
        return "\n".join(csv_text(t) for t in tables)
    if fmt == "latex":
        return "\n".join(latex(t) for t in tables)
    if fmt == "json":
        return json.dumps(Converter().unstructure(list(tables)), ensure_ascii=False, indent=1) + "\n"
    raise ValueError(fmt)


__all__ = ["FORMATS", "MISSING", "fmt_number", "render_text", "rich_table"]
