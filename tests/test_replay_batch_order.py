"""The Replay ablation on the command line: `--selector replay:RUN` with the seed RUN was
recorded with deals the same batches in the same order, so the run warns in one line why the
row would measure nothing; another seed (or batch_order_seed) deals another order and does not
warn. The manifest names the run followed and both batch orders."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from replay.models import specs as models
from replay.run import runner
from replay.run.options import RunOptions
from replay.rundir.serde import TaskSpec
from replay.rundir.trace import RunDir
from stratune_core.config.knobs import Config
from stratune_core.state.state import initial_state
from tests.support.cli import record_in_process, toy_extensions
from tests.support.toy import ToyTask


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    return record_in_process(tmp_path_factory.mktemp("replay") / "source", seed=3, max_rounds=3)


def _replay(source, out, **overrides) -> tuple[str, RunDir]:
    seed = overrides.pop("seed")
    options = RunOptions(task=TaskSpec(spec="toy"), target="scripted:toy-target",
                         optimizer="scripted:toy-optimizer", seed=seed,
                         overrides=(("selector", f"replay:{source}"), ("max_rounds", 3),
                                    *overrides.items()))
    text = io.StringIO()
    with models.using(toy_extensions()):
        code = runner.train(options, str(out), Console(file=text, width=400))
    assert code == runner.EXIT_OK
    return text.getvalue(), RunDir.at(out)


def test_the_recorded_runs_own_seed_warns_in_one_line(recorded, tmp_path):
    text, run = _replay(recorded, tmp_path / "same", seed=3)
    (line,) = [x for x in text.splitlines() if x.startswith("warning: replay:")]
    assert "batch order seed 3" in line and "same batches in the same order" in line
    origin = run.read_manifest().replay_of
    assert origin is not None and origin.same_batches and origin.run == str(recorded)


@pytest.mark.parametrize("overrides", [{"seed": 4}, {"seed": 3, "batch_order_seed": 99}])
def test_another_batch_order_does_not_warn(recorded, tmp_path, overrides):
    text, run = _replay(recorded, tmp_path / "other", **overrides)
    assert "warning: replay:" not in text
    origin = run.read_manifest().replay_of
    assert origin is not None and not origin.same_batches
    assert origin.recorded_batch_order == 3


def test_batch_order_seed_changes_the_batches_alone():
    task = ToyTask(n_train=48)
    base = initial_state(Config(seed=5), task)
    other = initial_state(Config(seed=5, batch_order_seed=6), task)
    assert other.batches != base.batches
    assert sorted(map(sorted, other.batches)) != sorted(map(sorted, base.batches))
    assert other.ranking_ids == base.ranking_ids  # the rest of the setup keeps the run seed
    assert initial_state(Config(seed=6), task).batches == other.batches
