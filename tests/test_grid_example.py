"""The docs' example grid (docs/grids.md), run as the page says (`python -m
examples.grid.run_scripted`): the grid file through `stratune grid` and the real SDK against the
fake Messages API server with the scripted toy models. The tables it prints are the ones the page
shows, byte for byte, the grid file is the one it shows, and its cells work with `replay`, `view`
and `--dry-run` like any run directory."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from examples.grid import run_scripted
from replay.commands.app import main as stratune
from replay.run import runner
from replay.viewer.show import load_run
from tests.support.docs import ROOT, block_after, page

GRIDS = page("grids.md")


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("example") / "runs" / "example-grid"
    capture = io.StringIO()
    mp = pytest.MonkeyPatch()
    mp.setenv("COLUMNS", "100")
    mp.setattr("sys.stdout", capture)
    try:
        assert run_scripted.run(str(out)) == 0
    finally:
        mp.undo()
    return out, capture.getvalue()


def test_the_docs_show_the_tables_this_grid_prints(example):
    _, printed = example
    shown = re.search(r"<!-- compare:begin -->\n(.*?)<!-- compare:end -->", GRIDS, re.S).group(1)
    tables = printed[printed.index("**Test scores"):]
    assert tables.strip() == shown.strip()
    assert re.search(r"grid: 16 cells in \S+example-grid: 16 done", printed)
    assert re.search(r"^live page: stratune serve \S+example-grid$", printed, re.M)


def test_the_cells_are_run_directories_for_replay_and_view(example):
    out, _ = example
    cell = out / "words/haiku-sonnet/replay/seed1"
    assert runner.replay(cell, Console(file=io.StringIO())) == runner.EXIT_OK
    assert load_run(cell).view.finished is not None


def test_a_rerun_skips_every_cell_and_dry_run_lists_them(example, capsys):
    out, _ = example
    grid = ROOT / "examples" / "grid" / "grid.toml"
    assert stratune(["grid", str(grid), "--out", str(out), "--dry-run"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert len(listed) == 16 and all(line.startswith("finished ") for line in listed)
    assert stratune(["grid", str(grid), "--out", str(out)]) == 0  # no server: nothing is called
    assert "16 skipped" in capsys.readouterr().out


def test_the_docs_show_the_grid_file_as_it_is():
    shown = block_after(GRIDS, "# Grids and the paper's tables", "toml")
    lines = (ROOT / "examples" / "grid" / "grid.toml").read_text(encoding="utf-8").splitlines()
    while lines[0].startswith("#"):  # the file's own header says how to run it
        lines.pop(0)
    assert shown.splitlines() == lines
