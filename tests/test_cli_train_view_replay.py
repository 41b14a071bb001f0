"""The `stratune` command end to end through subprocesses, on the toy world.

The toy task and the scripted models are plugged in by the tests' own entry module
(`python -m tests.support.cli`, which calls `replay.commands.app.main` with them); the package ships no
test doubles. Every model call goes through the real cache in the run directory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import ROOT, record_in_process, stratune

TRAIN = ("train", "--task", "toy", "--target", "scripted:toy-target",
         "--optimizer", "scripted:toy-optimizer", "--seed", "3")
cli = stratune

__all__ = ["ROOT", "TRAIN", "cli", "record_in_process"]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "run"
    done = cli(*TRAIN, "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "final skill:" in done.stdout and "rounds" in done.stdout
    return out


def test_train_writes_a_complete_run_directory(recorded):
    manifest = json.loads((recorded / "manifest.json").read_text())
    assert manifest["finished"] is True and manifest["seed"] == 3
    assert manifest["target"] == "scripted:toy-target"
    assert {p["name"] for p in manifest["packages"]} >= {"attrs", "cattrs", "rich"}
    lines = (recorded / "events.jsonl").read_text().splitlines()
    assert len(lines) == manifest["events"]
    assert json.loads(lines[-1])["_type"] == "RunFinished"
    assert (recorded / "final_skill.txt").read_text().strip()
    assert any((recorded / "cache").iterdir()) and any((recorded / "blobs").iterdir())
    usage = json.loads((recorded / "usage.json").read_text())
    assert {r["kind"] for r in usage["rows"]} >= {"target_execution", "candidate_generation",
                                                 "feedback_preparation"}


def test_view_shows_the_summary_and_details(recorded):
    done = cli("view", str(recorded))
    assert done.returncode == 0, done.stderr
    for part in ("StraTune run", "rounds", "operators:", "tokens and cost by call kind"):
        assert part in done.stdout
    detail = cli("view", str(recorded), "--round", "2")
    assert detail.returncode == 0 and "selection reasoning" in detail.stdout
    bad = cli("view", str(recorded), "--round", "999")
    assert bad.returncode == 2 and "--round 999: the run has rounds 1 to" in bad.stderr


def test_replay_matches_and_a_modified_trace_fails(recorded, tmp_path):
    ok = cli("replay", str(recorded))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "replay OK" in ok.stdout and "matches" in ok.stdout
    edited = tmp_path / "edited"
    shutil.copytree(recorded, edited)
    lines = (edited / "events.jsonl").read_text().splitlines()
    index = next(i for i, line in enumerate(lines) if '"_type":"BatchExecuted"' in line)
    data = json.loads(lines[index])
    data["solved"] += 1
    lines[index] = json.dumps(data, sort_keys=True, separators=(",", ":"))
    (edited / "events.jsonl").write_text("\n".join(lines) + "\n")
    failed = cli("replay", str(edited))
    assert failed.returncode == 1
    out = " ".join(failed.stdout.split())
    assert f"replay FAILED: event {index + 1} (BatchExecuted, round" in out
    assert "differs in solved: recorded" in out


def test_sigkill_then_rerun_gives_identical_events_and_skill(recorded, tmp_path):
    out = tmp_path / "killed"
    killed = cli(*TRAIN, "--out", str(out), STRATUNE_TEST_KILL_AFTER="60")
    assert killed.returncode == -9
    prefix = (out / "events.jsonl").read_text()
    full = (recorded / "events.jsonl").read_text()
    assert prefix and full.startswith(prefix.rsplit("\n", 1)[0])  # a readable prefix
    assert not (out / "final_skill.txt").exists()
    resumed = cli(*TRAIN, "--out", str(out))
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed: all" in resumed.stdout and "reproduced identically" in resumed.stdout
    assert (out / "events.jsonl").read_text() == full
    assert (out / "final_skill.txt").read_text() == (recorded / "final_skill.txt").read_text()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["event_digest"] == json.loads(
        (recorded / "manifest.json").read_text())["event_digest"]


def test_a_different_run_in_the_same_directory_is_refused(recorded, tmp_path):
    out = tmp_path / "other"
    shutil.copytree(recorded, out)
    done = cli(*TRAIN[:-1], "4", "--out", str(out))
    assert done.returncode == 2
    assert "holds a different run: config, seed differ" in done.stderr


def test_config_file_errors_name_file_and_field(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"budget": 120, "screen_solvd": 4}')
    done = cli(*TRAIN, "--config", str(path), "--out", str(tmp_path / "run"))
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: {path}: unknown field(s) 'screen_solvd': remove or fix them @ $"


def test_plan_warns_when_few_rounds_fit():
    done = cli("plan", *TRAIN[1:], "--budget", "60")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "budget │ 60 target executions" in text and "reserve │ exact" in text
    assert "smallest budget │ 65 for 1 round, 195 for 3 rounds" in text
    assert "warning: the budget cannot pay for one round" in text
    few = " ".join(cli("plan", *TRAIN[1:], "--budget", "120").stdout.split())
    assert "warning: the budget affords about 2 round(s)" in few
    roomy = cli("plan", *TRAIN[1:], "--budget", "2000")
    assert "warning" not in roomy.stdout and "rounds │ about" in " ".join(roomy.stdout.split())


def test_train_refuses_a_budget_below_one_round_before_writing_anything(tmp_path):
    """Budget 60 for 48 samples is exit 2 with the smallest budget named, and no run
    directory is left behind (a rerun with a larger budget starts afresh)."""
    done = cli(*TRAIN, "--budget", "60", "--out", str(tmp_path / "run"))
    assert done.returncode == 2
    assert "cannot pay for one round" in done.stderr and "at least 65" in done.stderr
    assert not (tmp_path / "run").exists()


def test_evaluate_scores_a_skill_through_the_cache(recorded, tmp_path):
    args = ("evaluate", "--skill", str(recorded / "final_skill.txt"), "--task", "toy",
            "--target", "scripted:toy-target", "--cache-dir", str(tmp_path / "cache"))
    first = cli(*args)
    assert first.returncode == 0, first.stderr
    assert "toy test: score" in first.stdout and "24 calls paid" in first.stdout
    again = cli(*args)
    assert "0 calls paid, 24 from cache" in again.stdout
    assert first.stdout.split("[")[0] == again.stdout.split("[")[0]


def test_the_package_alone_knows_no_test_doubles(tmp_path):
    """`stratune` itself: no toy task and no scripted models, whatever the environment says."""
    for env in ({}, {"STRATUNE_TEST_HOOKS": "1"}):
        done = subprocess.run([sys.executable, "-m", "replay.cli", *TRAIN, "--out",
                               str(tmp_path / "run")], cwd=ROOT, capture_output=True, text=True,
                              env={**os.environ, **env}, timeout=120, check=False)
        assert done.returncode == 2
        assert done.stderr.startswith("error: ") and "toy" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run" / "manifest.json").exists()


def test_train_through_the_fake_messages_api_then_replay_offline(tmp_path):
    """Both models are reached over HTTP by the real anthropic SDK; the replay needs no server."""
    from llm_cache.testing.fake_server import FakeAnthropicServer
    from tests.support.toy import toy_responder

    out = tmp_path / "http"
    with FakeAnthropicServer(responder=toy_responder()) as fake:
        done = cli("train", "--task", "toy", "--seed", "3", "--out", str(out),
                   "--target", f"anthropic:toy-target?base_url={fake.url}",
                   "--optimizer", f"anthropic:toy-optimizer?base_url={fake.url}",
                   ANTHROPIC_API_KEY="test-key")
        seen = len(fake.requests)
    assert done.returncode == 0, done.stdout + done.stderr
    usage = json.loads((out / "usage.json").read_text())
    assert seen == sum(r["paid_calls"] for r in usage["rows"]) > 0
    assert {r["model"] for r in usage["rows"]} == {"toy-target", "toy-optimizer"}
    assert {r["kind"] for r in usage["rows"]} >= {"target_execution", "candidate_generation",
                                                 "feedback_preparation"}
    replayed = cli("replay", str(out))  # the server is gone: every call must come from the cache
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "replay OK" in replayed.stdout


@pytest.mark.parametrize("hook", ["STRATUNE_TEST_INTERRUPT_AFTER", "STRATUNE_TEST_TERMINATE_AFTER"],
                         ids=["ctrl-c", "sigterm"])
def test_ctrl_c_stops_cleanly_and_the_rerun_completes(recorded, tmp_path, hook):
    out = tmp_path / "interrupted"
    stopped = cli(*TRAIN, "--out", str(out), **{hook: "60"})
    assert stopped.returncode == 130, stopped.stdout + stopped.stderr
    said = " ".join(stopped.stdout.split())
    assert "stopped: " in said and "run the same command again to resume" in said
    for noise in ("Traceback", "Task was destroyed", "never retrieved"):
        assert noise not in stopped.stderr, stopped.stderr
    kept = (out / "events.jsonl").read_text()
    assert kept and (recorded / "events.jsonl").read_text().startswith(kept)
    assert json.loads((out / "manifest.json").read_text())["finished"] is False
    resumed = cli(*TRAIN, "--out", str(out))
    assert resumed.returncode == 0
    assert (out / "events.jsonl").read_text() == (recorded / "events.jsonl").read_text()
