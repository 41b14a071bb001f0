"""The workbook check runs in a limited subprocess and reads only the cells it needs."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import openpyxl

from replay.tasks.workbook_check import CheckLimits, check, gold_cells
from tests.sandbox_fixtures import workbook


def _gold(tmp_path: Path) -> Path:
    path = tmp_path / "gold.xlsx"
    workbook(path, [["a", "sum"], [1], [2], [3], [None, 6]])
    return path


def _far_cell(path: Path, b5: object) -> Path:
    """4.9 KB-class workbook whose stored cells reach XFD1048576 (the issue's probe)."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sheet1"
    ws["B5"] = b5
    ws["XFD1048576"] = "far"
    wb.save(path)
    return path


def test_far_cell_costs_nothing(tmp_path: Path) -> None:
    """An output with a cell at XFD1048576 is checked by reading the answer cell only."""
    gold = _gold(tmp_path)
    good = check("'Sheet1'!B5", gold, _far_cell(tmp_path / "good.xlsx", 6))
    assert (good.correct, good.total, good.error) == (1, 1, "")
    bad = check("'Sheet1'!B5", gold, _far_cell(tmp_path / "bad.xlsx", 7))
    assert not bad.passed and bad.mismatches == ("Sheet1!B5: got 7, expected 6",)


def test_gold_extent_is_checked_before_iterating(tmp_path: Path) -> None:
    """A gold sheet spanning 17 billion cells, or a range that large, is refused by size."""
    far_gold = _far_cell(tmp_path / "gold.xlsx", 6)
    report = check("'Sheet1'!B:B", far_gold, far_gold)
    assert "over the limit" in report.error and report.total == 0
    huge = check("A1:XFD1048576", _gold(tmp_path), far_gold)
    assert "over the limit" in huge.error


def _bomb(path: Path, rows: int) -> Path:
    """A small file that expands to `rows` x 10 real cells."""
    buf = io.BytesIO()
    openpyxl.Workbook().save(buf)
    with zipfile.ZipFile(buf) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            if item.filename != "xl/worksheets/sheet1.xml":
                dst.writestr(item, src.read(item))
        with dst.open("xl/worksheets/sheet1.xml", "w") as fh:
            fh.write(b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
                     b"<sheetData>")
            cells = b"<c><v>1</v></c>" * 10
            for start in range(0, rows, 1000):
                fh.write(b"".join(b"<row>%s</row>" % cells for _ in range(min(1000, rows - start))))
            fh.write(b"</sheetData></worksheet>")
    return path


def test_memory_bomb_hits_the_checker_limit(tmp_path: Path) -> None:
    """A compressed sheet of millions of cells exhausts the checker's memory, not ours."""
    bomb = _bomb(tmp_path / "bomb.xlsx", 400_000)
    assert bomb.stat().st_size < 1024**2
    limits = CheckLimits(memory_bytes=300 * 1024**2, cpu_seconds=30, wall_seconds=60)
    report = check("'Sheet'!B5", _gold(tmp_path), bomb, limits=limits)
    assert report.total == 0 and "limit" in report.error, report


def test_unreadable_output_and_gold_feedback(tmp_path: Path) -> None:
    """Garbage is an unreadable workbook; the feedback shows the gold answer cells."""
    junk = tmp_path / "junk.xlsx"
    junk.write_bytes(b"PK\x03\x04 not really a zip")
    report = check("B5", _gold(tmp_path), junk)
    assert report.error.startswith("output workbook unreadable")
    assert gold_cells("'Sheet1'!B5", _gold(tmp_path)) == ("Sheet1!B5=6",)
