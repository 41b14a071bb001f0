"""Shared by the sandbox and SpreadsheetBench tests: tier parameters and a small data layout."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pytest

from replay.tasks.sandbox import Limits, SandboxUnavailable, Tier, TierName, choose

FAST = Limits(cpu_seconds=10, memory_bytes=1024**3, processes=32, file_bytes=4 * 1024**2,
              tmp_bytes=8 * 1024**2, work_bytes=32 * 1024**2, work_files=2000, wall_seconds=20)
TIER_PARAMS = [pytest.param(name, id=name.value) for name in TierName]


def tier_or_skip(name: TierName) -> Tier:
    try:
        return choose(name)
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))


def workbook(path: Path, rows: list[list[object]], title: str = "Sheet1") -> None:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = title
    for row in rows:
        ws.append(row)
    wb.save(path)


def write_layout(root: Path) -> Path:
    """SpreadsheetBench layout: one task per split, two cases, answer = sum of A2:A4 in B5."""
    for split, tid in (("train", "t1"), ("test", "t2")):
        folder = root / "SpreadsheetBench" / split
        task_dir = folder / "spreadsheet" / tid
        task_dir.mkdir(parents=True)
        cases = []
        for n in (1, 2):
            values = [n, n + 1, n + 2]
            workbook(task_dir / f"{n}_{tid}_input.xlsx", [["a", "sum"], *[[v] for v in values]])
            workbook(task_dir / f"{n}_{tid}_answer.xlsx",
                     [["a", "sum"], *[[v] for v in values], [None, sum(values)]])
            gold_key = "answer" if split == "train" else "golden"
            cases.append({"case": n, "input": f"{n}_{tid}_input.xlsx",
                          gold_key: f"{n}_{tid}_answer.xlsx"})
        task = {"id": tid, "dir": f"spreadsheet/{tid}", "payload": "p",
                "instruction": "Put the sum of column A in B5.",
                "instruction_type": "Cell-Level Manipulation",
                "answer_position": "'Sheet1'!B5", "answer_sheet": "Sheet1",
                "data_position": "A1:A4", "cases": cases}
        (folder / "tasks.json").write_text(json.dumps([task]))
        (folder / "task_ids.json").write_text(json.dumps([tid]))
    return root


GOOD = """Here you go:
```python
import openpyxl
INPUT_PATH = "/somewhere/else.xlsx"
wb = openpyxl.load_workbook(INPUT_PATH)
ws = wb.active
ws["B5"] = sum(ws.cell(row=r, column=1).value for r in range(2, ws.max_row + 1))
wb.save(OUTPUT_PATH)
```"""
