"""One writer per directory across every command: `evaluate --out D` and `train --out D`
exclude each other, a second `evaluate` of other skills never replaces the first's scores, and
`view --output` / `compare --output` never write inside a run, evaluation or grid directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from replay.rundir.lock import RunLock
from tests.support.cli import TOY_RUN, main, record_in_process

EVALUATE = ("evaluate", "--task", "toy", "--target", "scripted:toy-target")


def _files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*"))
            if p.is_file() and not p.name.endswith(("-shm", "-wal"))}


def _refused(capsys, *argv: str) -> str:
    code = main(list(argv))
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    return record_in_process(tmp_path_factory.mktemp("writer") / "run", max_rounds=1)


@pytest.fixture
def skills(tmp_path) -> tuple[Path, Path]:
    one, two = tmp_path / "one.txt", tmp_path / "two.txt"
    one.write_text("Answer in one word.\n")
    two.write_text("Answer in two words.\n")
    return one, two


def test_evaluate_is_refused_while_a_train_holds_the_directory(tmp_path, capsys, skills):
    out = tmp_path / "d"
    out.mkdir()
    with RunLock.acquire(out, "train"):
        err = _refused(capsys, *EVALUATE, "--skill", str(skills[0]), "--out", str(out))
    assert f"(pid {os.getpid()})" in err and "`stratune train`" in err
    assert not (out / "scores.json").exists() and not (out / "cache").exists()


def test_train_is_refused_while_an_evaluate_holds_the_directory(tmp_path, capsys):
    out = tmp_path / "d"
    out.mkdir()
    with RunLock.acquire(out, "evaluate"):
        err = _refused(capsys, "train", *TOY_RUN, "--out", str(out))
    assert "`stratune evaluate`" in err and "evaluation" in err
    assert not (out / "manifest.json").exists()


def test_train_refuses_an_evaluation_directory(tmp_path, capsys, skills):
    out = tmp_path / "d"
    assert main([*EVALUATE, "--skill", str(skills[0]), "--out", str(out)]) == 0
    before = _files(out)
    err = _refused(capsys, "train", *TOY_RUN, "--out", str(out))
    assert "holds an evaluation" in err
    assert _files(out) == before


def test_a_second_evaluate_of_other_skills_is_refused_the_same_is_a_rerun(tmp_path, capsys,
                                                                          skills):
    out = tmp_path / "d"
    assert main([*EVALUATE, "--skill", str(skills[0]), "--out", str(out)]) == 0
    before = _files(out)
    err = _refused(capsys, *EVALUATE, "--skill", str(skills[1]), "--out", str(out))
    assert "other skills" in err and "another --out" in err
    err = _refused(capsys, *EVALUATE, "--skill", str(skills[0]), "--baseline", "initial",
                   "--out", str(out))
    assert "other skills, baseline" in err
    assert _files(out) == before  # nothing scored, nothing replaced
    assert main([*EVALUATE, "--skill", str(skills[0]), "--out", str(out)]) == 0
    assert (out / "scores.json").read_bytes() == before["scores.json"]


def test_evaluate_still_refuses_a_training_run(run, capsys, skills):
    before = _files(run)
    err = _refused(capsys, *EVALUATE, "--skill", str(skills[0]), "--out", str(run))
    assert "holds a training run" in err
    assert _files(run) == before


@pytest.mark.parametrize("where", ["run", "nested", "link", "evaluation", "grid"])
def test_view_and_compare_refuse_an_output_inside_a_stratune_directory(run, tmp_path, capsys,
                                                                       skills, where):
    target = {"run": run, "nested": run / "blobs"}.get(where)
    if where == "link":
        (tmp_path / "link").symlink_to(run)
        target = tmp_path / "link"
    elif where == "evaluation":
        target = tmp_path / "d"
        assert main([*EVALUATE, "--skill", str(skills[0]), "--out", str(target)]) == 0
    elif where == "grid":
        target = tmp_path / "g"
        target.mkdir()
        (target / "grid.toml").write_text("seeds = [0]\n")
        RunLock.acquire(target, "grid").release()
    assert target is not None
    before = _files(target.resolve())
    err = _refused(capsys, "view", str(run), "--export", "txt", "--output",
                   str(target / "view.txt"))
    assert "--output" in err and "write the file somewhere else" in err
    err = _refused(capsys, "compare", str(run), "--format", "csv", "--output",
                   str(target / "table.csv"))
    assert "--output" in err
    assert _files(target.resolve()) == before


def test_view_and_compare_write_outside(run, tmp_path, capsys):
    project = tmp_path / "project"  # a directory with its own manifest.json is not a run
    project.mkdir()
    (project / "manifest.json").write_text("{}")
    assert main(["view", str(run), "--export", "txt", "--output", str(project / "v.txt")]) == 0
    assert main(["compare", str(run), "--format", "csv", "--output",
                 str(project / "t.csv")]) == 0
    assert (project / "v.txt").is_file() and (project / "t.csv").is_file()
