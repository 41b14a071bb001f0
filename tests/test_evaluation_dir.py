"""`stratune evaluate --baseline ... --out DIR`: a transfer result anyone re-checks offline with
`stratune replay DIR` (issue 15), on the toy world through the real cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import stratune as cli

TARGET = ("--task", "toy", "--target", "scripted:toy-target")


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("evaluation")
    skill = tmp / "skill.txt"
    skill.write_text("Answer in one word.\n", encoding="utf-8")
    out = tmp / "transfer"
    done = cli("evaluate", "--skill", str(skill), "--baseline", "initial", *TARGET,
               "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "baseline" in done.stdout and "wins" in done.stdout and "48 calls paid" in done.stdout
    return out


def test_the_directory_holds_scores_skills_and_cache(evaluated):
    record = json.loads((evaluated / "scores.json").read_text())
    assert record["format"] == "stratune-evaluation/1" and record["baseline"] == "initial"
    assert [s["label"] for s in record["skills"]][0] == "initial"
    assert all(len(s["scores"]) == record["n"] == 24 for s in record["skills"])
    assert len(list((evaluated / "blobs").iterdir())) == 2 and (evaluated / "cache").is_dir()


def test_replay_rechecks_it_offline(evaluated):
    done = cli("replay", str(evaluated))
    assert done.returncode == 0, done.stderr
    assert "replay OK: evaluation of 2 skills on 24 test samples" in done.stdout


@pytest.mark.parametrize("edit", ["score", "mean"])
def test_an_edited_score_is_named(evaluated, tmp_path, edit):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(evaluated, copy)
    record = json.loads((copy / "scores.json").read_text())
    skill = record["skills"][1]
    if edit == "score":
        skill["scores"][4] = 1.0 - skill["scores"][4]
    else:
        skill["mean"] += 0.25
    (copy / "scores.json").write_text(json.dumps(record))
    done = cli("replay", str(copy))
    assert done.returncode == 1
    expected = "sample 5 of the test split" if edit == "score" else "mean or solved count edited"
    assert "replay FAILED" in done.stdout and expected in done.stdout


def test_a_missing_cache_entry_is_explained(evaluated, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(evaluated, copy, ignore=shutil.ignore_patterns("cache"))
    (copy / "cache").mkdir()
    done = cli("replay", str(copy))
    assert done.returncode != 0
    assert "cache" in (done.stdout + done.stderr)


def test_out_refuses_a_training_run(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text("{}")
    skill = tmp_path / "s.txt"
    skill.write_text("x\n")
    done = cli("evaluate", "--skill", str(skill), "--baseline", "initial", *TARGET,
               "--out", str(run))
    assert done.returncode == 2 and "holds a training run" in done.stderr
