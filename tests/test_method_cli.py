"""`stratune train --method ...` through the command line: the manifest records the method, the
run replays exactly offline, a killed run resumes to the uninterrupted result, and an option
the method does not have is a one-line error (exit 2) before anything is written or spent."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import ROOT, TOY_RUN, stratune

BASELINES = ("textgrad", "iter-cot", "trace2skill", "skillopt", "gepa")


def _train(out: Path, method: str, *extra: str, kill_after: int = 0,
           ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "STRATUNE_TEST_KILL_AFTER"}
    if kill_after:
        env["STRATUNE_TEST_KILL_AFTER"] = str(kill_after)
    return subprocess.run([sys.executable, "-m", "tests.support.cli", "train", *TOY_RUN,
                           "--limit", "30", "--seed", "2", "--method", method, *extra,
                           "--out", str(out)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


def _outcome(out: Path) -> dict[str, object]:
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    return {"final": (out / "final_skill.txt").read_text(encoding="utf-8"),
            "digest": manifest["event_digest"],
            "events": (out / "events.jsonl").read_text(encoding="utf-8")}


@pytest.mark.parametrize(("method", "flag"), [
    ("textgrad", ("--selector", "random")),
    ("textgrad", ("--no-validation",)),
    ("textgrad", ("--profile", "released")),
    ("textgrad", ("--operator", "I1+F1")),
    ("iter-cot", ("--max-rounds", "3")),
    ("trace2skill", ("--forms", "F4")),
    ("gepa", ("--selector", "random")),
    ("gepa", ("--no-final-selection",)),
])
def test_an_option_the_method_lacks_is_one_line_and_spends_nothing(tmp_path, method, flag):
    out = tmp_path / "run"
    done = stratune("train", *TOY_RUN, "--method", method, *flag, "--out", str(out))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and flag[0] in lines[0] and f"--method {method}" in lines[0]
    assert not out.exists()


def test_an_unknown_method_is_a_usage_error(tmp_path):
    done = stratune("train", *TOY_RUN, "--method", "dspy", "--out", str(tmp_path / "run"))
    assert done.returncode == 2 and "--method" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("method", BASELINES)
def test_a_method_run_records_its_method_and_replays_exactly(tmp_path, method):
    out = tmp_path / method
    done = _train(out, method, "--test-eval")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["method"]["_type"].lower().startswith(method.replace("-", ""))
    assert (out / "evaluation.json").is_file()
    replayed = stratune("replay", str(out))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "replay OK" in replayed.stdout
    shown = stratune("view", str(out))
    assert shown.returncode == 0, shown.stderr
    assert method in shown.stdout
    curve = "validation score against executions spent" in shown.stdout
    assert curve == (method in ("textgrad", "skillopt", "gepa"))  # the methods with a validation split


@pytest.mark.slow
@pytest.mark.parametrize("method", BASELINES)
def test_a_killed_method_run_resumes_to_the_uninterrupted_result(tmp_path, method):
    reference = tmp_path / "reference"
    assert _train(reference, method).returncode == 0
    usage = json.loads((reference / "usage.json").read_text(encoding="utf-8"))
    calls = sum(r["paid_calls"] for r in usage["rows"] if r["kind"] == "target_execution")
    for k in sorted(random.Random(30).sample(range(1, calls + 1), 3)):
        out = tmp_path / f"killed-at-{k}"
        killed = _train(out, method, kill_after=k)
        assert killed.returncode == -signal.SIGKILL, killed.stderr[-1000:]
        rerun = _train(out, method)
        assert rerun.returncode == 0, rerun.stdout[-1000:] + rerun.stderr[-1000:]
        assert _outcome(out) == _outcome(reference), f"kill point {k}: the resumed run differs"


@pytest.mark.parametrize("method", BASELINES)
def test_plan_estimates_each_method_within_the_budget(method):
    done = stratune("plan", *TOY_RUN, "--method", method)
    assert done.returncode == 0, done.stderr
    assert f"plan for --method {method}" in done.stdout
    assert "288 target executions" in done.stdout and "optimizer calls" in done.stdout


def test_a_manifest_without_a_method_is_a_stratune_run():
    """Traces recorded before the baselines existed read as StraTune runs (and so replay)."""
    import attrs

    from replay.rundir.serde import manifest_from_json, manifest_to_json
    from stratune_core.records.method_spec import StraTuneMethod, TextGradMethod

    text = (ROOT / "tests" / "data" / "legacy_manifests" / "demo.json").read_text(encoding="utf-8")
    assert '"method"' not in text
    manifest = manifest_from_json(text)
    assert manifest.method == StraTuneMethod()
    textgrad = manifest_from_json(manifest_to_json(
        attrs.evolve(manifest, method=TextGradMethod(minibatch=4))))
    assert textgrad.method == TextGradMethod(minibatch=4)
    assert textgrad.run_identity() != manifest.run_identity()
