"""The view at 80 columns, the width of most terminals: on a 20-round run the round table keeps
round, operator, gains, verdict and spent whole on every row, and no line is wider than 80.
Lower-value columns give way first; at 120 columns the selection reasoning is back."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from replay.viewer import summary
from replay.viewer.show import load_run
from replay.viewer.style import VERDICT_SHORT
from tests.support.cli import record_in_process

OPERATOR = re.compile(r"^I[123](\+F[1-4])?$")


@pytest.fixture(scope="module")
def long_run(tmp_path_factory) -> Path:
    """The scripted toy models over 20 rounds (a wider budget than the default); the rounds that
    found no failure are skipped, and the view folds a run of them into one row ("18–20")."""
    return record_in_process(tmp_path_factory.mktemp("wide") / "run", seed=8, n_train=24,
                             test_split="test", budget=None, budget_multiplier=16.0,
                             max_rounds=20)


def _numbers(row: str) -> list[int]:
    """The round numbers a row stands for: one, or a folded run "a–b"."""
    first = row.split()[0]
    if "–" in first:
        a, b = first.split("–")
        return list(range(int(a), int(b) + 1))
    return [int(first)]


def _numbered(rows: list[str]) -> dict[int, str]:
    return {n: row for row in rows if row[:5].strip()[:1].isdigit() for n in _numbers(row.strip())}


def _screen(run: Path, width: int) -> list[str]:
    loaded = load_run(run)
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(summary(loaded.view, loaded.manifest, loaded.usage, loaded.evaluation))
    return console.export_text().splitlines()


def _round_rows(lines: list[str]) -> list[str]:
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("# operator"))
    rows = []
    for line in lines[start + 2:]:
        if not line.strip():
            break
        rows.append(line)
    return rows


def test_twenty_rounds_fit_80_columns_with_the_key_columns_whole(long_run):
    lines = _screen(long_run, 80)
    assert all(len(line.rstrip()) <= 80 for line in lines)
    view = load_run(long_run).view
    assert len(view.rounds) == 20
    header = next(line for line in lines if line.lstrip().startswith("# operator"))
    for name in ("scr. Δ", "val. Δ", "verdict", "spent", "cand.", "W/L/D/U", "LB S/DU"):
        assert name in header, name
    rows = _round_rows(lines)
    assert not any("…" in row for row in rows)
    numbered = _numbered(rows)
    assert sorted(numbered) == list(range(1, 21))
    verdicts = set(VERDICT_SHORT.values())
    for r in view.rounds:
        row = numbered[r.index + 1]
        cells = row.split()
        if cells[1] == "—":  # a skipped round: no operator, nothing evaluated
            assert not r.candidates, row
            continue
        assert OPERATOR.match(cells[1]), row
        assert cells[-1] == str(r.spent_end), row
        if r.candidates:
            c = r.candidates[0]
            assert any(v in row for v in verdicts), row
            if c.screening is not None:
                assert f"{c.screening.stats.gain:+.3f}" in row, row
            if c.validation is not None:
                assert f"{c.validation.stats.gain:+.3f}" in row, row


def test_a_wide_terminal_shows_the_reasoning_too(long_run):
    lines = _screen(long_run, 120)
    header = next(line for line in lines if line.lstrip().startswith("# operator"))
    assert "why" in header
    assert any("first-round" in row for row in _round_rows(lines))


@pytest.mark.parametrize("width", [60, 72, 100])
def test_no_line_is_wider_than_the_terminal(long_run, width):
    lines = _screen(long_run, width)
    assert all(len(line.rstrip()) <= width for line in lines)
    rows = _round_rows(lines)
    assert set(_numbered(rows)) == set(range(1, 21))
