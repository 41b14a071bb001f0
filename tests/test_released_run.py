"""The closing note's `--profile released` toy runs (docs/profiles.md, "The released profile"),
through the shell: run A fires every released mechanism but two (`NOT_IN_A`), runs B and C fire
those (`tests/support/mechanisms.py` says why no toy run fires all), the manifest holds the
released values, and a released run replays offline byte for byte (the released code's prompts
could not be replayed: docs/released-code.md §12.1)."""

from __future__ import annotations

import gc
import io
import re

import pytest
from rich.console import Console

from replay.models import specs as models
from replay.run import runner
from replay.rundir.trace import RunDir
from stratune_core.config.mechanisms import ScreenSmoke
from tests.support import cli
from tests.support.docs import page
from tests.support.mechanisms import CLOSING, MECHANISMS, NOT_IN_A, by_type, fired


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, RunDir]:
    out = tmp_path_factory.mktemp("released")
    made = {}
    for name, closing in CLOSING.items():
        assert cli.main(["train", *closing.args(), "--out", str(out / name)]) == runner.EXIT_OK
        gc.collect()  # the cache's worker-thread SQLite connection closes when collected
        made[name] = RunDir.at(out / name)
    return made


@pytest.fixture(scope="module")
def counts(runs) -> dict[str, dict[str, int]]:
    return {name: fired(run.read_events()[1]) for name, run in runs.items()}


def test_run_a_fires_every_mechanism_but_those_another_run_fires(counts):
    assert set(counts["A"]) == set(MECHANISMS)
    assert [name for name, n in counts["A"].items() if n == 0] == list(NOT_IN_A), counts["A"]


@pytest.mark.parametrize("mechanism", list(NOT_IN_A))
def test_what_run_a_does_not_fire_another_run_does(counts, mechanism):
    assert counts[NOT_IN_A[mechanism]][mechanism] >= 1, counts


def test_the_docs_tables_are_what_the_three_runs_fired(runs, counts):
    """The counts docs/profiles.md gives for runs A, B and C: mechanisms, then events by type."""
    text = page("profiles.md")
    tables = text[text.index("Times each mechanism fired"):text.index("Released-code defects")]
    shown = {name: tuple(int(n) for n in row)
             for name, *row in re.findall(r"`([\w /]+)` \| (\d+) \| (\d+) \| (\d+)", tables)}
    order = list(CLOSING)
    mechanisms = {name: tuple(counts[run][name] for run in order) for name in MECHANISMS}
    types = [by_type(runs[run].read_events()[1]) for run in order]
    by_name = {name: tuple(t[name] for t in types) for name in set().union(*types)}
    assert {name: shown.get(name) for name in mechanisms} == mechanisms
    assert {name: shown.get(name) for name in by_name} == by_name
    assert set(shown) == set(mechanisms) | set(by_name)


def test_the_manifest_holds_the_released_values(runs):
    manifest = runs["A"].read_manifest()
    config = manifest.config
    assert manifest.profile == "released"
    assert (config.screen_smoke, config.validation_futility, config.final_min_common) == (
        ScreenSmoke(samples=8), 80, 20)
    assert config.probation and config.donor_salvage and config.initial_in_pool
    assert config.i2_without_failures and config.feedback_global_stats


def test_a_released_run_replays_offline_byte_for_byte(runs):
    with models.using(cli.toy_extensions()):
        assert runner.replay(runs["A"].path, Console(file=io.StringIO())) == runner.EXIT_OK
