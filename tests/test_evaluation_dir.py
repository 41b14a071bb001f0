"""`stratune evaluate --baseline ... --out DIR`: a transfer result anyone re-checks offline with
`stratune replay DIR`, on the toy world through the real cache."""

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
    assert record["format"] == "stratune-evaluation/2" and record["seal"]
    assert record["baseline"] == "initial"
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


def test_the_committed_transfer_gain_is_the_answer_format():
    """docs/demo-trace.md, "Beside fixed-operator baselines": on the 1.5B target the demo's final
    skill wins 17 samples and loses none, because the model then answers with the bare value
    rather than a sentence. Read back from the committed evaluation's cache."""
    from llm_cache.client import CachedLLM
    from llm_cache.modes import Mode
    from llm_cache.reader import CacheReader
    from replay.evaluate import directory as evaluation_dir
    from replay.models import specs as models
    from replay.rundir.trace import RunDir

    trace = Path(__file__).resolve().parents[1] / "traces" / "transfer-1.5b"
    record = evaluation_dir.read(trace)
    base, final = (record.skill(label) for label in ("initial", "traces/demo/final_skill.txt"))
    won = [i for i, (b, f) in enumerate(zip(base.scores, final.scores, strict=True)) if f > b]
    assert (base.solved, final.solved, len(won)) == (1, 18, 17)
    assert all(f >= b for b, f in zip(base.scores, final.scores, strict=True))
    task = models.load_task(record.task)
    samples = task.split(record.split)
    replies = {}
    with CachedLLM(CacheReader(RunDir.at(trace).cache), backends={}, mode=Mode.REPLAY) as llm:
        for skill in (base, final):
            text = RunDir.at(trace).read_blob(skill.skill_id)
            requests = [r for x in samples for r in task.requests(text, x, record.target_model)]
            replies[skill.label] = [r.text.strip() for r in llm.complete(requests)]
    mean = {k: sum(map(len, v)) / len(v) for k, v in replies.items()}
    print(f"mean reply length: initial {mean[base.label]:.1f}, final {mean[final.label]:.1f}")
    assert round(mean[base.label], 1) == 38.4 and round(mean[final.label], 1) == 25.7
    for i in won:  # a sentence around the value under s0, the value alone under the final skill
        short, long = replies[final.label][i], replies[base.label][i]
        assert len(short) < len(long) and short.rstrip(".") in long, (short, long)
