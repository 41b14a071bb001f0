"""The run's shape: the one place the derived sizes come from, as the run itself uses them."""

from __future__ import annotations

import pytest

from replay.plan import make_plan
from stratune_core.config import Config, released
from stratune_core.context import Env
from stratune_core.events import RunStarted
from stratune_core.run import iterate
from stratune_core.shape import run_shape
from tests.support.toy import InProcessLLM, ToyTask


@pytest.mark.parametrize("config", [Config(), released(), Config(final_selection=False),
                                    Config(validation=False, budget=40, n_batches=50)])
@pytest.mark.parametrize("n_train", [8, 48, 500])
def test_shape_is_what_the_run_and_the_plan_use(config, n_train):
    task = ToyTask(n_train=n_train)
    shape = run_shape(config, n_train)
    if shape.usable < shape.batch:  # such a run is refused before it starts
        return
    _, events = next(iterate(config, task, InProcessLLM()))
    started = events[0]
    assert isinstance(started, RunStarted)
    assert (started.budget, started.reserve, started.n_batches) == (
        shape.budget, shape.reserve, shape.n_batches)
    assert Env.build(config, task, InProcessLLM()).shape == shape
    assert make_plan(config, task).shape == shape


def test_derived_sizes():
    shape = run_shape(Config(), 500)
    assert (shape.budget, shape.reserve, shape.batch, shape.ranking) == (3000, 750, 32, 41)
    assert (shape.screening, shape.validation, shape.usable) == (36, 150, 2250)
    small = run_shape(Config(budget=10), 20)  # the reserve leaves the rounds one execution
    assert (small.reserve, small.usable, small.ranking) == (9, 1, 5)
    assert run_shape(Config(validation=False, final_selection=False), 100).validation == 0
