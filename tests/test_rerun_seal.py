"""A rerun of a finished run never seals a file edited after the run finished, and says what
it rewrote; a finished run written by a version that seals cannot lose its seal unnoticed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from replay.rundir import seal
from replay.rundir.trace import RunDir
from tests.support.cli import TOY_RUN, main, record_in_process

TRAIN = ("train", *TOY_RUN, "--seed", "3")


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    return record_in_process(tmp_path_factory.mktemp("rerun") / "run")


@pytest.fixture(scope="module")
def with_test(tmp_path_factory) -> Path:
    return record_in_process(tmp_path_factory.mktemp("rerun-test") / "run", test_split="test")


@pytest.fixture
def run(finished, tmp_path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(finished, copy)
    return copy


def _files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*"))
            if p.is_file() and "cache" not in p.parts}


def _json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def _train(capsys, out: Path, *extra: str) -> tuple[int, str, str]:
    code = main([*TRAIN, *extra, "--out", str(out)])
    captured = capsys.readouterr()
    return code, " ".join(captured.out.split()), captured.err


EDITS = {
    "usage cost": ("usage.json", lambda run: _json(run / "usage.json", lambda d: d[
        "total"].__setitem__("cost", 0.0))),
    "git revision": ("manifest.json", lambda run: _json(run / "manifest.json", lambda d: d.__setitem__(
        "git_revision", "0" * 40))),
    "final skill": ("final_skill.txt", lambda run: (run / "final_skill.txt").write_text("x\n")),
    "events reformatted": ("events.jsonl", lambda run: (run / "events.jsonl").write_bytes(
        (run / "events.jsonl").read_bytes() + b"\n")),
    "evaluation put there": ("evaluation.json", lambda run: (run / "evaluation.json").write_text(
        "{}\n")),
    "seal set to null": ("not sealed", lambda run: _json(run / "manifest.json", lambda d: d.__setitem__(
        "seal", None))),
    "seal key deleted": ("not sealed", lambda run: _json(run / "manifest.json", lambda d: d.pop(
        "seal"))),
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_a_rerun_refuses_a_file_edited_after_the_seal_and_seals_nothing(run, capsys, name):
    named, edit = EDITS[name]
    edit(run)
    before = _files(run)
    code, _, err = _train(capsys, run)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert named in err and ("a rerun does not seal" in err), err
    assert _files(run) == before  # nothing rewritten, nothing sealed
    assert seal.check(RunDir.at(run)) is not None  # still reported as altered
    assert main(["replay", str(run)]) != 0


def test_a_rerun_says_what_it_rewrote(run, capsys):
    code, said, err = _train(capsys, run)
    assert code == 0, err
    assert "rerun of a finished run: every file already held what it recomputed; nothing " \
           "rewritten" in said
    code, said, err = _train(capsys, run, "--test-eval")  # the test scores, added later
    assert code == 0, err
    assert "rerun of a finished run: rewrote evaluation.json, manifest.json, usage.json" in said
    assert main(["replay", str(run)]) == 0


def test_a_stop_between_the_test_evaluation_and_its_seal_is_resumed(run, with_test, capsys):
    """evaluation.json and usage.json written, the run stopped before sealing them: the same
    command (with --test-eval) writes both again and seals; without it, it is refused."""
    for name in ("evaluation.json", "usage.json"):
        shutil.copy(with_test / name, run / name)
    code, _, err = _train(capsys, run)
    assert code == 2 and "usage.json" in err and "add --test-eval" in err, err
    code, said, err = _train(capsys, run, "--test-eval")
    assert code == 0, err
    assert "rewrote" in said and "manifest.json" in said
    assert seal.check(RunDir.at(run)) is None
    assert main(["replay", str(run)]) == 0


def test_a_seal_downgrade_is_refused_by_a_rerun(run, capsys):
    """Format 1 without a seal, on a run its content says a sealing version made: the rerun
    refuses it (nothing rewritten, nothing sealed) instead of rerunning it as one from before
    seals."""
    def downgraded(data: dict) -> None:
        data.pop("seal")
        data["format"] = 1
    _json(run / "manifest.json", downgraded)
    _json(run / "usage.json", lambda d: d["total"].__setitem__("cost", 0.0))
    before = _files(run)
    code, said, err = _train(capsys, run)
    assert code == 2 and "not sealed" in err and "seal was removed" in err, err
    assert _files(run) == before
    assert seal.status(run).integrity is seal.Integrity.ALTERED
    assert main(["replay", str(run)]) == 1
    assert "recorded before runs were sealed" not in capsys.readouterr().out


@pytest.mark.parametrize("source", ["with test scores", "without"])
def test_a_rerun_with_the_test_evaluation_refuses_an_edited_usage(run, with_test, tmp_path,
                                                                   capsys, source):
    """An edited usage.json is no stop's trace while evaluation.json matches the seal (the test
    evaluation writes evaluation.json first): `--test-eval` refuses it instead of sealing its
    own figures over it, nothing written."""
    if source == "with test scores":
        run = tmp_path / "tested"
        shutil.copytree(with_test, run)
    _json(run / "usage.json", lambda d: d["total"].__setitem__("cost", 0.0))
    before = _files(run)
    code, _, err = _train(capsys, run, "--test-eval")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "usage.json" in err and "a rerun does not seal" in err, err
    assert "add --test-eval" not in err
    assert _files(run) == before
    assert seal.check(RunDir.at(run)) is not None
