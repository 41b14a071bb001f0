"""`stratune train --generator gepa|skillopt` through the command line: the manifest records
the generator (and a StraTune run without one is written as before), the run replays exactly
offline, `view` names the hybrid, a killed run resumes to the uninterrupted result, and
`--generator` where it does not belong is a one-line error (exit 2) before anything is
written or spent."""

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

GENERATORS = ("gepa", "skillopt")


def _train(out: Path, *extra: str, kill_after: int = 0) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "STRATUNE_TEST_KILL_AFTER"}
    if kill_after:
        env["STRATUNE_TEST_KILL_AFTER"] = str(kill_after)
    return subprocess.run([sys.executable, "-m", "tests.support.cli", "train", *TOY_RUN,
                           "--limit", "30", "--seed", "2", *extra, "--out", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
                          check=False)


def _outcome(out: Path) -> dict[str, object]:
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    return {"final": (out / "final_skill.txt").read_text(encoding="utf-8"),
            "digest": manifest["event_digest"],
            "events": (out / "events.jsonl").read_text(encoding="utf-8")}


@pytest.mark.parametrize("generator", GENERATORS)
def test_a_hybrid_run_records_its_generator_and_replays_exactly(tmp_path, generator):
    out = tmp_path / generator
    done = _train(out, "--generator", generator, "--test-eval")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["method"] == {"_type": "StraTuneMethod", "generator": generator}
    assert (out / "evaluation.json").is_file()
    events = (out / "events.jsonl").read_text(encoding="utf-8")
    assert '"_type":"GeneratorProposed"' in events and '"_type":"OperatorChosen"' not in events
    replayed = stratune("replay", str(out))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "replay OK" in replayed.stdout
    shown = stratune("view", str(out))
    assert shown.returncode == 0, shown.stderr
    assert f"generator {generator} (Table 4 hybrid)" in shown.stdout


@pytest.mark.parametrize("generator", GENERATORS)
def test_plan_names_the_generator(generator):
    done = stratune("plan", *TOY_RUN, "--generator", generator)
    assert done.returncode == 0, done.stderr
    assert f"generator: {generator} writes each round's candidate" in done.stdout
    assert "288 target executions" in done.stdout


def test_a_stratune_run_without_a_generator_is_written_as_before(tmp_path):
    out = tmp_path / "own"
    done = _train(out, "--max-rounds", "1")
    assert done.returncode == 0, done.stderr[-2000:]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["method"] == {"_type": "StraTuneMethod"}


@pytest.mark.slow
@pytest.mark.parametrize("generator", GENERATORS)
def test_a_killed_hybrid_run_resumes_to_the_uninterrupted_result(tmp_path, generator):
    reference = tmp_path / "reference"
    assert _train(reference, "--generator", generator).returncode == 0
    usage = json.loads((reference / "usage.json").read_text(encoding="utf-8"))
    calls = sum(r["paid_calls"] for r in usage["rows"] if r["kind"] == "target_execution")
    for k in sorted(random.Random(31).sample(range(1, calls + 1), 3)):
        out = tmp_path / f"killed-at-{k}"
        killed = _train(out, "--generator", generator, kill_after=k)
        assert killed.returncode == -signal.SIGKILL, killed.stderr[-1000:]
        rerun = _train(out, "--generator", generator)
        assert rerun.returncode == 0, rerun.stdout[-1000:] + rerun.stderr[-1000:]
        assert _outcome(out) == _outcome(reference), f"kill point {k}: the resumed run differs"


@pytest.mark.parametrize(("flags", "named"), [
    (("--method", "textgrad", "--generator", "gepa"), "--generator"),
    (("--method", "gepa", "--generator", "skillopt"), "--generator"),
    (("--method", "gepa", "--selector", "random"), "--selector"),
    (("--generator", "gepa", "--selector", "random"), "--selector"),
    (("--generator", "skillopt", "--operator", "I1+F1"), "--operator"),
])
def test_a_generator_where_it_does_not_belong_is_one_line_and_spends_nothing(tmp_path, flags,
                                                                            named):
    out = tmp_path / "run"
    done = stratune("train", *TOY_RUN, *flags, "--out", str(out))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {named}:")
    assert not out.exists()
