"""A `--profile released` run of the toy world through the shell (issue 12, part A): the manifest
holds the released values, the mechanisms leave their events in the trace, and the run replays
offline byte for byte (the released code's prompts could not be replayed: §12 of the notes)."""

from __future__ import annotations

import gc
import io
from collections import Counter

import pytest
from rich.console import Console

from replay import models, runner
from replay.options import RunOptions
from replay.serde import TaskSpec
from replay.trace import RunDir
from tests.support.cli import toy_extensions


@pytest.fixture(scope="module")
def released_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("released") / "run"
    options = RunOptions(task=TaskSpec(spec="toy-continuous", limit=190),
                         target="scripted:toy-target",
                         optimizer="scripted:toy-optimizer?style=wide", seed=0,
                         profile="released", overrides=(("budget_multiplier", 6.0),))
    with models.using(toy_extensions()):
        code = runner.train(options, str(out), Console(file=io.StringIO(), width=100))
    assert code == runner.EXIT_OK
    gc.collect()  # the cache's worker-thread SQLite connection closes when collected
    return RunDir.at(out)


def test_the_manifest_and_the_trace_hold_the_released_mechanisms(released_run):
    manifest = released_run.read_manifest()
    config = manifest.config
    assert manifest.profile == "released"
    assert (config.screen_smoke, config.validation_futility, config.final_min_common) == (8, 80, 20)
    assert config.probation and config.donor_salvage and config.initial_in_pool
    _, events = released_run.read_events()
    kinds = Counter(type(e).__name__ for e in events)
    for kind in ("ProbationOpened", "FutilityStopped", "SalvageAttempted"):
        assert kinds[kind] >= 1, (kind, kinds)


def test_a_released_run_replays_offline_byte_for_byte(released_run):
    with models.using(toy_extensions()):
        assert runner.replay(released_run.path, Console(file=io.StringIO())) == runner.EXIT_OK
