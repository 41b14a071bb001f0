"""The closing note's `--profile released` toy runs (docs/profiles.md, "The released profile"),
through the shell: run A fires every released mechanism but three (`ONLY_IN_B`), run B fires
those (`tests/support/mechanisms.py` says why no toy run fires all), the manifest holds the
released values, and a released run replays offline byte for byte (the released code's prompts
could not be replayed: docs/released-code.md §12.1)."""

from __future__ import annotations

import gc
import io
import re

import pytest
from rich.console import Console

from replay import models, runner
from replay.trace import RunDir
from stratune_core.config.mechanisms import ScreenSmoke
from tests.support import cli
from tests.support.docs import page
from tests.support.mechanisms import (
    CLOSING_A,
    CLOSING_B,
    MECHANISMS,
    ONLY_IN_B,
    ClosingRun,
    by_type,
    fired,
)


def _train(closing: ClosingRun, out) -> RunDir:
    assert cli.main(["train", *closing.args(), "--out", str(out)]) == runner.EXIT_OK
    gc.collect()  # the cache's worker-thread SQLite connection closes when collected
    return RunDir.at(out)


@pytest.fixture(scope="module")
def run_a(tmp_path_factory) -> RunDir:
    return _train(CLOSING_A, tmp_path_factory.mktemp("released") / "a")


def test_run_a_fires_every_mechanism_but_one(run_a):
    _, events = run_a.read_events()
    counts = fired(events)
    assert [name for name, n in counts.items() if n == 0] == list(ONLY_IN_B), counts
    assert set(counts) == set(MECHANISMS)


@pytest.fixture(scope="module")
def run_b(tmp_path_factory) -> RunDir:
    return _train(CLOSING_B, tmp_path_factory.mktemp("released") / "b")


def test_run_b_fires_what_run_a_does_not(run_b):
    _, events = run_b.read_events()
    counts = fired(events)
    assert all(counts[name] >= 1 for name in ONLY_IN_B), counts


def test_the_docs_tables_are_what_the_two_runs_fired(run_a, run_b):
    """The counts docs/profiles.md gives for runs A and B: mechanisms, then events by type."""
    text = page("profiles.md")
    tables = text[text.index("Times each mechanism fired"):text.index("Released-code defects")]
    shown = {name: (int(a), int(b))
             for name, a, b in re.findall(r"`([\w /]+)` \| (\d+) \| (\d+)", tables)}
    (_, events_a), (_, events_b) = run_a.read_events(), run_b.read_events()
    mechanisms = {name: (fired(events_a)[name], fired(events_b)[name]) for name in MECHANISMS}
    types_a, types_b = by_type(events_a), by_type(events_b)
    types = {name: (types_a[name], types_b[name]) for name in types_a | types_b}
    assert {name: shown.get(name) for name in mechanisms} == mechanisms
    assert {name: shown.get(name) for name in types} == types
    assert set(shown) == set(mechanisms) | set(types)


def test_the_manifest_holds_the_released_values(run_a):
    manifest = run_a.read_manifest()
    config = manifest.config
    assert manifest.profile == "released"
    assert (config.screen_smoke, config.validation_futility, config.final_min_common) == (
        ScreenSmoke(samples=8), 80, 20)
    assert config.probation and config.donor_salvage and config.initial_in_pool
    assert config.i2_without_failures and config.feedback_global_stats


def test_a_released_run_replays_offline_byte_for_byte(run_a):
    with models.using(cli.toy_extensions()):
        assert runner.replay(run_a.path, Console(file=io.StringIO())) == runner.EXIT_OK
