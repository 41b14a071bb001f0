"""An evaluation directory's seal: what `stratune replay` cannot recompute (each skill's label,
n, which skill is the baseline) is covered by scores.json's seal, and n and the baseline are
also checked against the scores themselves. An evaluation without a seal is never taken as
checked, whatever its `format` says; the same `evaluate` seals it again from its cache."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from replay.evaluate import directory as evaluation_dir
from tests.support.cli import main


@pytest.fixture(scope="module")
def command(tmp_path_factory) -> list[str]:
    tmp = tmp_path_factory.mktemp("evaluation-seal")
    skill = tmp / "one.txt"
    skill.write_text("Answer in one word.\n", encoding="utf-8")
    return ["evaluate", "--task", "toy", "--target", "scripted:toy-target", "--skill",
            str(skill), "--baseline", "initial"]


@pytest.fixture(scope="module")
def evaluated(command, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("evaluated") / "out"
    assert main([*command, "--out", str(out)]) == 0
    return out


@pytest.fixture
def copy(evaluated, tmp_path) -> Path:
    path = tmp_path / "copy"
    shutil.copytree(evaluated, path)
    return path


def _edit(path: Path, change: Callable[[dict], None]) -> None:
    data = json.loads((path / "scores.json").read_text())
    change(data)
    (path / "scores.json").write_text(json.dumps(data, indent=2))


def _replay(path: Path, capsys) -> tuple[int, str]:
    code = main(["replay", str(path)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _swap_labels(data: dict) -> None:
    one, two = data["skills"]
    one["label"], two["label"] = two["label"], one["label"]


EDITS = {
    "label renamed": (lambda d: d["skills"][1].__setitem__("label", "better.txt"), "seal"),
    "labels swapped": (_swap_labels, "not the task's initial skill"),
    "baseline moved": (lambda d: d.__setitem__("baseline", d["skills"][1]["label"]), "seal"),
    "baseline removed": (lambda d: d.__setitem__("baseline", None), "seal"),
    "baseline to no skill": (lambda d: d.__setitem__("baseline", "nosuch.txt"),
                             "is none of its skills"),
    "n edited": (lambda d: d.__setitem__("n", d["n"] + 1), "but n is"),
    "initial is another skill": (lambda d: d["skills"][0].__setitem__(
        "skill_id", d["skills"][1]["skill_id"]), "not the task's initial skill"),
    "seal deleted": (lambda d: d.pop("seal"), "not sealed"),
    "seal downgrade": (lambda d: (d.pop("seal"), d.__setitem__(
        "format", "stratune-evaluation/1")), "not sealed"),
    "task field added": (lambda d: d["task"].__setitem__("limit", 12), "seal"),
}


def test_the_recorded_evaluation_is_sealed_and_replays(evaluated, capsys):
    data = json.loads((evaluated / "scores.json").read_text())
    assert data["format"] == evaluation_dir.FORMAT and data["seal"] == evaluation_dir.seal_of(data)
    code, said = _replay(evaluated, capsys)
    assert code == 0 and "replay OK" in said, said


@pytest.mark.parametrize("name", sorted(EDITS))
def test_each_edit_is_named_in_one_line(copy, capsys, name):
    change, named = EDITS[name]
    _edit(copy, change)
    code, said = _replay(copy, capsys)
    assert code == 1 and "replay OK" not in said and "Traceback" not in said, said
    assert "scores.json" in said and named in said and said.count("\n") == 1, said


def test_the_same_evaluate_seals_an_unsealed_one_again_from_its_cache(copy, command, capsys):
    def unseal(data: dict) -> None:
        data.pop("seal")
        data["format"] = evaluation_dir.UNSEALED_FORMAT

    _edit(copy, unseal)
    assert main([*command, "--out", str(copy)]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "0 calls paid" in said, said
    code, said = _replay(copy, capsys)
    assert code == 0 and "replay OK" in said, said


def test_the_committed_transfer_evaluation_is_sealed():
    trace = Path(__file__).resolve().parents[1] / "traces" / "transfer-1.5b"
    record = evaluation_dir.read(trace)
    assert record.seal is not None and evaluation_dir.seal_problem(trace, record) is None
