"""Crash equivalence: a live CLI run SIGKILLed at any point and rerun with the same command ends
exactly like the uninterrupted run (final skill, event digest, events, budget).

The kill points are drawn with a seeded generator among the run's paid target calls; the CLI's
tests' entry module (`tests/support/cli.py`, hook `STRATUNE_TEST_KILL_AFTER`) makes the process
SIGKILL itself on that call, i.e. mid-round, with some of the round's answers cached and none of
its events written.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KILL_POINTS = 10
COMMAND = ("train", "--task", "toy", "--limit", "36", "--target", "scripted:toy-target",
           "--optimizer", "scripted:toy-optimizer", "--seed", "2")


def _train(out: Path, kill_after: int = 0) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("STRATUNE_TEST_KILL_AFTER", None)
    if kill_after:
        env["STRATUNE_TEST_KILL_AFTER"] = str(kill_after)
    return subprocess.run([sys.executable, "-m", "tests.support.cli", *COMMAND, "--out", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def _outcome(out: Path) -> dict[str, object]:
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    lines = (out / "events.jsonl").read_text(encoding="utf-8").splitlines()
    finished = json.loads(lines[-1])
    assert finished["_type"] == "RunFinished"
    return {
        "final_skill": (out / "final_skill.txt").read_text(encoding="utf-8"),
        "digest": manifest["event_digest"],
        "events": lines,
        "budget": (finished["spent"], finished["budget"]),
    }


def _paid_target_calls(out: Path) -> int:
    usage = json.loads((out / "usage.json").read_text(encoding="utf-8"))
    return sum(r["paid_calls"] for r in usage["rows"] if r["kind"] == "target_execution")


@pytest.mark.slow
def test_killed_runs_resume_to_the_uninterrupted_result(tmp_path):
    done = _train(tmp_path / "reference")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    reference = _outcome(tmp_path / "reference")
    calls = _paid_target_calls(tmp_path / "reference")
    assert calls > KILL_POINTS

    points = sorted(random.Random(20261122).sample(range(1, calls + 1), KILL_POINTS))
    for k in points:
        out = tmp_path / f"killed-at-{k}"
        killed = _train(out, kill_after=k)
        assert killed.returncode == -signal.SIGKILL, f"kill point {k}: {killed.stderr[-1000:]}"
        assert not (out / "final_skill.txt").exists()
        rerun = _train(out)
        assert rerun.returncode == 0, f"kill point {k}: {rerun.stdout[-1000:]}{rerun.stderr[-1000:]}"
        assert _outcome(out) == reference, f"kill point {k}: the resumed run differs"
        # Calls 1..k-1 were cached before the kill: the rerun pays for exactly the rest.
        assert _paid_target_calls(out) == calls - (k - 1)
