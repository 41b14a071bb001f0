"""Child side of the workbook check: `python -I workbook_reader.py ROOT` reads a JSON request
on stdin and prints one JSON answer. Runs under the limits `workbook_check` sets.

Each gold sheet's extent is checked before its cells are iterated; of the output workbook
only the answer cells are read, so a stray cell at XFD1048576 costs nothing.
Request: {"position", "gold", "output" (path or null), "max_cells", "show"}.
Answer: a CellReport as a dict, or for output=null {"shown": [...]} (gold answer cells).
"""

from __future__ import annotations

import json
import sys
from typing import Any


def _sheet_cells(ws: Any, max_cells: int) -> dict[tuple[int, int], object]:
    from stratune_core.tasks.spreadsheet_compare import RangeError

    rows, cols = ws.max_row, ws.max_column  # computed from stored cells (not read-only mode)
    if rows * cols > max_cells:
        raise RangeError(f"gold sheet {ws.title!r} spans {rows}x{cols} cells, over the "
                         f"limit of {max_cells}")
    return {(c.row, c.column): c.value for row in ws.iter_rows() for c in row
            if c.value is not None}


def _load(path: str) -> Any:
    import openpyxl

    return openpyxl.load_workbook(path, data_only=True, keep_links=False)


def answer(request: dict[str, Any]) -> dict[str, Any]:
    from stratune_core.tasks.spreadsheet_compare import (
        RangeError,
        answer_cells,
        column_letters,
        compare,
    )

    max_cells = int(request["max_cells"])
    position = str(request["position"])
    gold_wb = _load(request["gold"])
    try:
        gold = {ws.title: _sheet_cells(ws, max_cells) for ws in gold_wb.worksheets}
        if request["output"] is None:
            targets = answer_cells(position, gold, tuple(gold), max_cells=max_cells)
            return {"shown": [f"{g}!{column_letters(c)}{r}={gold[g].get((r, c))!r:.30}"
                              for g, _, (r, c) in targets[: int(request["show"])]]}
        out_wb = _load(request["output"])
        sheets = tuple(out_wb.sheetnames)
        targets = answer_cells(position, gold, sheets, max_cells=max_cells)
    except RangeError as exc:
        return {"correct": 0, "total": 0, "mismatches": [], "error": str(exc)}
    output: dict[str, dict[tuple[int, int], object]] = {name: {} for name in sheets}
    for _, out_sheet, (r, c) in targets:
        value = out_wb[out_sheet].cell(row=r, column=c).value
        if value is not None:
            output[out_sheet][(r, c)] = value
    report = compare(position, gold, output, show=int(request["show"]))
    return {"correct": report.correct, "total": report.total,
            "mismatches": list(report.mismatches), "error": report.error}


def main() -> None:
    sys.path.insert(0, sys.argv[1])
    request = json.loads(sys.stdin.read())
    which = "output" if request.get("output") else "gold"
    try:
        result = answer(request)
    except MemoryError:
        result = {"unreadable": f"{which} workbook exceeds the checker's memory limit"}
    except Exception as exc:  # any openpyxl failure: the workbook is unreadable
        result = {"unreadable": f"{which} workbook unreadable: {type(exc).__name__}: {exc!s:.120}"}
    sys.stdout.write(json.dumps(result, default=str))


if __name__ == "__main__":
    main()
