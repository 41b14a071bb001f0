"""SpreadsheetBench: cell comparison rules, range parsing and the sandboxed task end to end."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from llm_cache.records import Response
from replay.tasks import spreadsheet
from replay.tasks.sandbox import Limits
from stratune_core.records.errors import TaskDataError
from stratune_core.tasks.spreadsheet_compare import (
    RangeError,
    compare,
    expand_range,
    resolve_sheet,
    split_position,
    values_equal,
)
from tests.sandbox_fixtures import GOOD, write_layout


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (None, "", True),
        ("", None, True),
        (None, 0, False),
        (1, 1.0, True),
        (1.004, 1.0, True),
        (1.006, 1.0, False),
        ("12.50", 12.5, True),
        ("12.5 kg", 12.5, False),
        (True, 1, True),
        ("abc", "abc", True),
        ("abc", "ABC", False),
        (dt.datetime(2024, 3, 7, 10, 0), dt.datetime(2024, 3, 7, 11, 0), True),
        (dt.datetime(2024, 3, 7, 10, 0), dt.datetime(2024, 3, 8, 10, 0), False),
        (dt.datetime(2024, 3, 7), 45358, True),
        (dt.date(2024, 3, 7), dt.datetime(2024, 3, 7), True),
        (dt.time(14, 30, 5), dt.time(14, 30, 59), True),
        (dt.time(14, 30), "14:30", True),
        (5, "five", False),
    ],
)
def test_values_equal(a: object, b: object, equal: bool) -> None:
    """None equals "", numbers round to 2 places, numeric strings are numbers, dates are days."""
    assert values_equal(a, b) is equal
    assert values_equal(b, a) is equal


def test_split_position_tolerates_official_quirks() -> None:
    """Stray quotes, spaces and several ranges are read as the data means them."""
    assert split_position("'CS!'B1:B8,'S!'B1:B8") == (("CS", "B1:B8"), ("S", "B1:B8"))
    assert split_position("FinalReport'!A2:F5") == (("FinalReport", "A2:F5"),)
    assert split_position("CS!'B1: B8") == (("CS", "B1:B8"),)
    assert split_position("$A$1:$B$2") == ((None, "A1:B2"),)
    with pytest.raises(RangeError):
        split_position(" , ")


def test_expand_range_forms() -> None:
    """Cells, boxes, whole columns/rows (bounded by the sheet) and the short "BD2:308" form."""
    assert expand_range("B2", (9, 9)) == ((2, 2),)
    assert expand_range("A1:B2", (9, 9)) == ((1, 1), (1, 2), (2, 1), (2, 2))
    assert expand_range("B:B", (3, 9)) == ((1, 2), (2, 2), (3, 2))
    assert expand_range("2:2", (9, 2)) == ((2, 1), (2, 2))
    assert expand_range("BD2:4", (1, 1)) == ((2, 56), (3, 56), (4, 56))
    with pytest.raises(RangeError):
        expand_range("A1:B2:C3", (9, 9))


def test_sheet_resolution() -> None:
    """Exact, then case/space-insensitive, then the only sheet; unknown among several fails."""
    assert resolve_sheet("sheet 1", ("Sheet1", "Data")) == "Sheet1"
    assert resolve_sheet("Nope", ("Only",)) == "Only"
    assert resolve_sheet(None, ("First", "Second")) == "First"
    with pytest.raises(RangeError):
        resolve_sheet("Nope", ("A", "B"))


def test_compare_counts_cells_and_names_mismatches() -> None:
    """Two of three answer cells right; the wrong one is named with both values."""
    gold = {"Sheet1": {(1, 1): 1, (2, 1): "x", (3, 1): 3.0}}
    out = {"Sheet1": {(1, 1): "1", (2, 1): "x", (3, 1): None}}
    report = compare("'Sheet1'!A1:A3", gold, out)
    assert (report.correct, report.total, report.passed) == (2, 3, False)
    assert report.mismatches == ("Sheet1!A3: got None, expected 3.0",)
    bad = compare("'Missing'!A1", {"A": {}, "B": {}}, {"A": {}, "B": {}})
    assert bad.error and not bad.passed


FORMULA = GOOD.replace('sum(ws.cell(row=r, column=1).value for r in range(2, ws.max_row + 1))', '"=SUM(A2:A4)"')
CRASH = "```python\nraise ValueError('boom')\n```"
LIMITS = Limits(cpu_seconds=20, memory_bytes=1024**3, file_bytes=16 * 1024**2, wall_seconds=30)


def test_loader_preview_and_prompt(tmp_path: Path) -> None:
    """Cases resolve to workbooks; the prompt holds instruction, position and a preview."""
    task = spreadsheet.load(write_layout(tmp_path), limits=LIMITS)
    sample = task.split("train")[0]
    assert [c.number for c in sample.payload.cases] == [1, 2]
    (req,) = task.requests("SKILL", sample, "m")
    text = req.user_text()
    assert "Put the sum of column A in B5." in text and "'Sheet1'!B5" in text
    assert "A2=1" in text and "max_row=4" in text
    assert task.split("test")[0].payload.cases[0].gold_path.name == "1_t2_answer.xlsx"


def test_correct_program_passes_every_case(tmp_path: Path) -> None:
    """The program runs per case in the sandbox; right cells in all cases score 1."""
    task = spreadsheet.load(write_layout(tmp_path), limits=LIMITS)
    score = task.score(task.split("train")[0], (Response(text=GOOD),))
    assert (score.value, score.aux, score.summary) == (1.0, 1.0, "")
    assert "INPUT_PATH = " not in score.output


def test_uncomputed_formula_fails(tmp_path: Path) -> None:
    """A formula is not recalculated: the cell reads None and mismatches."""
    task = spreadsheet.load(write_layout(tmp_path), limits=LIMITS)
    score = task.score(task.split("train")[0], (Response(text=FORMULA),))
    assert score.value == 0.0 and score.aux == 0.0
    assert "got None" in score.summary


def test_crash_after_success_cannot_reuse_stale_output(tmp_path: Path) -> None:
    """A failing program scores 0 even right after a passing one on the same task."""
    task = spreadsheet.load(write_layout(tmp_path), limits=LIMITS)
    sample = task.split("train")[0]
    assert task.score(sample, (Response(text=GOOD),)).value == 1.0
    crashed = task.score(sample, (Response(text=CRASH),))
    assert crashed.value == 0.0 and "program failed (exit 2)" in crashed.summary
    assert "boom" in crashed.summary


def test_missing_workbook_is_named(tmp_path: Path) -> None:
    """A case whose workbook is absent fails the load with its path and field."""
    root = write_layout(tmp_path)
    (root / "SpreadsheetBench/test/spreadsheet/t2/2_t2_input.xlsx").unlink()
    with pytest.raises(TaskDataError, match=r"cases\[1\]: field 'input': workbook .*2_t2_input.xlsx not found"):
        spreadsheet.load(root)
