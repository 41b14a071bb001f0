"""Where a run, an evaluation and a grid may be written, and who may write into a run's cache:
`--out` is never a filesystem root, a home directory, a directory holding other files or a
place inside another StraTune directory; `evaluate --cache-dir RUN/cache` and `cache prune`
take the run's lock or are refused; a grid skips a complete cell only while its seal holds;
`compare` counts a copied run once (it refuses the copy)."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from replay.grid.grid_file import load_grid
from replay.grid.run import run_grid
from replay.rundir.lock import RunLock
from replay.rundir.out_dir import check_out
from stratune_core.records.errors import StraTuneError
from tests.grid_support import ScriptedEnv, write_grid
from tests.support.cli import TOY_RUN, main, record_in_process

TRAIN = ("train", *TOY_RUN, "--limit", "12", "--seed", "3")


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    return record_in_process(tmp_path_factory.mktemp("places") / "run", n_train=12)


@pytest.fixture
def run(finished, tmp_path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(finished, copy)
    return copy


def _refused(capsys, *argv: str) -> str:
    code = main(list(argv))
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err


def test_out_is_never_a_filesystem_root_or_a_home_directory(tmp_path, monkeypatch, capsys):
    err = _refused(capsys, *TRAIN, "--out", "/")
    assert "filesystem root" in err
    skill = tmp_path / "s.txt"
    skill.write_text("Answer.\n")
    assert "filesystem root" in _refused(capsys, "evaluate", "--task", "toy", "--target",
                                         "scripted:toy-target", "--skill", str(skill),
                                         "--out", "/")
    grid = write_grid(tmp_path / "grid.toml", ablations="full = {}\n", seeds="[0]", limit=12)
    assert "filesystem root" in _refused(capsys, "grid", str(grid), "--out", "/")
    assert not any(Path("/", name).exists() for name in ("manifest.json", "scores.json",
                                                         "grid.toml", "cache", "blobs"))
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert "home directory" in _refused(capsys, *TRAIN, "--out", str(home))
    assert "home directory" in _refused(capsys, *TRAIN, "--out", "~")
    with pytest.raises(StraTuneError, match="home directory"):
        check_out(home, "grid")
    assert list(home.iterdir()) == []  # nothing written


def test_out_holding_other_files_is_refused_before_anything_is_written(tmp_path, capsys):
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("mine\n")
    (project / "src").mkdir()
    err = _refused(capsys, *TRAIN, "--out", str(project))
    assert "not a run's" in err and "README.md" in err and "src" in err
    assert sorted(p.name for p in project.iterdir()) == ["README.md", "src"]
    err = _refused(capsys, "evaluate", "--task", "toy", "--target", "scripted:toy-target",
                   "--skill", str(project / "README.md"), "--out", str(project))
    assert "not an evaluation's" in err and "README.md" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main([*TRAIN, "--out", str(empty)]) == 0  # an empty directory is fine
    assert main([*TRAIN, "--out", str(empty)]) == 0  # and so is its own run again
    capsys.readouterr()


@pytest.mark.parametrize("inside", ["cache", "sub", "blobs/x", "skill"])
def test_out_inside_another_run_is_refused(run, inside, capsys):
    target = run / inside
    before = sorted(str(p) for p in run.rglob("*"))
    err = _refused(capsys, *TRAIN, "--out", str(target))
    assert "inside a run directory" in err and str(run) in err
    assert sorted(str(p) for p in run.rglob("*")) == before


def test_an_evaluation_or_a_grid_inside_a_run_is_refused(run, tmp_path, capsys):
    skill = run / "final_skill.txt"
    err = _refused(capsys, "evaluate", "--task", "toy", "--target", "scripted:toy-target",
                   "--skill", str(skill), "--out", str(run / "eval"))
    assert "inside a run directory" in err
    with pytest.raises(StraTuneError, match="inside a run directory"):
        check_out(run / "grid", "grid")


def test_evaluate_into_a_run_s_cache_takes_the_run_s_lock(run, capsys):
    argv = ["evaluate", "--task", "toy", "--limit", "12", "--target", "scripted:toy-target",
            "--skill", str(run / "final_skill.txt"), "--cache-dir", str(run / "cache")]
    with RunLock.acquire(run):  # the run is training
        err = _refused(capsys, *argv)
        assert "is writing this run" in err and "choose another --cache-dir" in err
    assert main(argv) == 0  # the run done: its cache answers, under its lock
    capsys.readouterr()
    held = RunLock.acquire(run, "evaluate --cache-dir")  # a train meanwhile is refused in turn
    try:
        err = _refused(capsys, *TRAIN, "--out", str(run))
        assert "stratune evaluate --cache-dir" in err and "writing this directory's cache" in err
    finally:
        held.release()
    assert "not its cache" in _refused(capsys, *argv[:-1], str(run / "blobs"))


def test_cache_prune_takes_the_run_s_lock(run, capsys):
    argv = ["cache", "prune", "--corrupt", "--cache-dir", str(run / "cache")]
    with RunLock.acquire(run):
        assert "is writing this run" in _refused(capsys, *argv)
    assert main(argv) == 0
    assert "deleted 0 of" in capsys.readouterr().out
    assert main(["replay", str(run)]) == 0


def _grid(tmp_path: Path) -> tuple[Path, Path]:
    path = write_grid(tmp_path / "grid.toml", ablations="full = {}\n", seeds="[0]", limit=12)
    root = tmp_path / "out"
    assert run_grid(load_grid(path), root, Console(file=io.StringIO()),
                    env=ScriptedEnv()).code == 0
    return path, root


def test_a_downgraded_grid_cell_is_not_counted_as_done(tmp_path, capsys):
    """A cell's `"format": 1` and a deleted seal: the grid does not skip it as complete,
    and compare marks it ALTERED."""
    path, root = _grid(tmp_path)
    cell = root / "toy/scripted/full/seed0"
    manifest = json.loads((cell / "manifest.json").read_text())
    del manifest["seal"]
    manifest["format"] = 1
    (cell / "manifest.json").write_text(json.dumps(manifest, indent=2))
    result = run_grid(load_grid(path), root, Console(file=io.StringIO()), env=ScriptedEnv())
    status, = result.statuses
    assert status.state == "failed" and "not sealed" in status.message, status
    assert result.code != 0
    assert main(["compare", str(root), "--table", "runs", "--format", "csv"]) == 0
    assert "ALTERED" in capsys.readouterr().out


def test_a_copied_grid_cell_is_not_counted_twice(tmp_path, capsys):
    _, root = _grid(tmp_path)
    cell = root / "toy/scripted/full/seed0"
    shutil.copytree(cell, root / "toy/scripted/full/seed0-copy")
    err = _refused(capsys, "compare", str(root))
    assert "a copy of the grid cell" in err and "seed0-copy" in err
    run = tmp_path / "alone"
    shutil.copytree(cell, run)
    (run / "grid_cell.json").unlink()
    other = tmp_path / "alone2"
    shutil.copytree(run, other)
    assert "a copy of the run" in _refused(capsys, "compare", str(run), str(other))
    # the copy's coordinates moved with it: its id edited to its new place
    coords = json.loads((root / "toy/scripted/full/seed0-copy/grid_cell.json").read_text())
    coords["id"] = "toy/scripted/full/seed0-copy"
    (root / "toy/scripted/full/seed0-copy/grid_cell.json").write_text(json.dumps(coords))
    assert "a copy of the grid cell" in _refused(capsys, "compare", str(root))
    assert "given twice" in _refused(capsys, "compare", str(run), str(run))
    shutil.rmtree(root / "toy/scripted/full/seed0-copy")
    assert main(["compare", str(root)]) == 0
    capsys.readouterr()


def test_a_run_inside_a_grid_is_only_its_own_cell(tmp_path, capsys):
    _, root = _grid(tmp_path)
    assert "inside a grid directory" in _refused(capsys, *TRAIN, "--out", str(root / "mine"))
    assert main(["grid", str(tmp_path / "grid.toml"), "--out", str(root), "--dry-run"]) == 0
    capsys.readouterr()
    assert os.path.isdir(root / "toy")
