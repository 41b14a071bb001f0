"""Manifests written before the released mechanisms were records spell them flat (a switch
beside its parameters). They still read, to the same Config, and a run directory started then
resumes to the result of an uninterrupted run.

`tests/data/flat_config.json` is the config of the committed demo trace's manifest as it was
recorded (flat).
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import attrs

from replay.rundir.serde import manifest_from_json
from stratune_core.config.knobs import Config
from stratune_core.config.mechanisms import MECHANISMS, StrategyFloors, counted, flat_keys
from stratune_core.config.profiles import released
from stratune_core.config.serde import structure, unstructure
from tests.support.cli import stratune

ROOT = Path(__file__).resolve().parents[1]
COMMAND = ("train", "--task", "toy-continuous", "--limit", "60", "--target",
           "scripted:toy-target", "--optimizer", "scripted:toy-optimizer?style=full",
           "--profile", "released", "--seed", "19", "--budget", "6x")


def flat(config: dict[str, Any]) -> dict[str, Any]:
    """Nested Config data written the way manifests were before the records: every mechanism's
    switch and every parameter, also of the mechanisms that are off."""
    out = dict(config)
    for mechanism, record in MECHANISMS.items():
        value = out.pop(mechanism)
        for attribute in attrs.fields(record):
            key = str(attribute.metadata["key"])
            out[key] = attribute.default if value is None else value[attribute.name]
        if not counted(mechanism):
            out[record.SWITCH] = value is not None
        elif value is None:
            out[record.SWITCH] = 0
    return out


def test_the_demo_traces_flat_config_reads_as_its_records():
    data = json.loads((ROOT / "tests" / "data" / "flat_config.json").read_text(encoding="utf-8"))
    assert "floor_i2_frac" in data and "i2_window" not in data  # flat, and older than some fields
    config = structure(data, Config)
    assert config.strategy_floors == StrategyFloors(i2_frac=0.15, i3_frac=0.3)
    assert config.early_stopping is None and config.max_epochs == 1
    assert config.i2_window is None and config.warmup is None
    assert structure(unstructure(config), Config) == config  # and writes nested


def test_a_flat_config_reads_to_the_config_it_was_written_from():
    for config in (Config(), released(), released().replace(i2_window=None, warmup_solved=0,
                                                            ranking_smoke=5)):
        data = flat(unstructure(config))
        assert set(flat_keys()) <= set(data)
        assert structure(data, Config) == config


def test_a_flat_parameter_of_a_mechanism_that_was_off_is_dropped():
    data = flat(unstructure(Config()))
    data["i2_window_drafts"] = 9  # had no effect when recorded
    assert structure(data, Config) == Config()


def _train(out: Path, kill_after: int = 0) -> subprocess.CompletedProcess[str]:
    kill = {"STRATUNE_TEST_KILL_AFTER": str(kill_after)} if kill_after else {}
    return stratune(*COMMAND, "--out", str(out), **kill)


def _result(out: Path) -> tuple[str, str]:
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    return manifest["event_digest"], (out / "final_skill.txt").read_text(encoding="utf-8")


def test_a_run_started_with_a_flat_manifest_resumes_to_the_uninterrupted_result(tmp_path):
    assert _train(tmp_path / "reference").returncode == 0
    usage = json.loads((tmp_path / "reference" / "usage.json").read_text(encoding="utf-8"))
    calls = sum(r["paid_calls"] for r in usage["rows"] if r["kind"] == "target_execution")
    out = tmp_path / "killed"
    assert _train(out, kill_after=calls // 2).returncode == -signal.SIGKILL
    path = out / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["config"] = flat(data["config"])
    path.write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")
    assert manifest_from_json(path.read_text(encoding="utf-8")).config.i2_window is not None
    rerun = _train(out)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert _result(out) == _result(tmp_path / "reference")
    # the resumed run writes its manifest nested
    assert "i2_window_drafts" not in json.loads(path.read_text(encoding="utf-8"))["config"]
