"""The run's shape: the one place the derived sizes come from, as the run itself uses them."""

from __future__ import annotations

import pytest

from replay.plan.estimate import make_plan
from stratune_core.config.knobs import Config
from stratune_core.config.profiles import released
from stratune_core.config.shape import run_shape
from stratune_core.records.errors import BudgetError
from stratune_core.round.run import iterate
from stratune_core.state.context import Env
from stratune_core.state.events import RunStarted
from tests.support.toy import InProcessLLM, ToyTask


@pytest.mark.parametrize("config", [Config(), released(), Config(final_selection=False),
                                    Config(validation=False, budget=40, n_batches=50)])
@pytest.mark.parametrize("n_train", [8, 48, 500])
def test_shape_is_what_the_run_and_the_plan_use(config, n_train):
    task = ToyTask(n_train=n_train)
    shape = run_shape(config, n_train)
    if shape.budget < shape.smallest_budget(1):  # such a run is refused before it starts
        with pytest.raises(BudgetError, match="cannot pay for one round"):
            next(iterate(config, task, InProcessLLM()))
        return
    _, events = next(iterate(config, task, InProcessLLM()))
    started = events[0]
    assert isinstance(started, RunStarted)
    assert (started.budget, started.reserve, started.n_batches) == (
        shape.budget, shape.reserve, shape.n_batches)
    assert Env.build(config, task, InProcessLLM()).shape == shape
    assert make_plan(config, task).shape == shape


def test_plan_shows_the_released_sizes_of_a_small_task():
    """On 48 samples the released profile screens on 18 + 18 and validates on what is left:
    the plan says so, and warns that validation is coarse (never 'validation 100')."""
    plan = make_plan(released(), ToyTask(n_train=48))
    assert (plan.shape.screening, plan.shape.validation, plan.validation_wanted) == (36, 9, 100)
    assert plan.warning is not None and "validated on at most 9 samples instead of 100" in plan.warning
    assert make_plan(Config(), ToyTask(n_train=500)).warning is None


def test_derived_sizes():
    shape = run_shape(Config(), 500)
    assert (shape.budget, shape.reserve, shape.batch, shape.ranking) == (3000, 0, 32, 41)
    assert (shape.screening, shape.validation, shape.usable) == (36, 150, 3000)
    assert shape.exact_reserve and not run_shape(released(), 500).exact_reserve
    assert (run_shape(released(), 500).reserve, run_shape(Config(reserve=9), 20).reserve) == (750, 9)
    assert run_shape(Config(validation=False, final_selection=False), 100).validation == 0


def test_smallest_budget_for_one_and_three_rounds():
    """A round needs its batch and one screening (candidate and current skill on Q_s) on top
    of the reserve. With 48 samples Q_s gets 31 (48 less a batch of 3 and the 14 of Q_v):
    3 + 31 + 31; the released profile adds its fixed 72, keeps Q_s at 18 + 18 and validates on
    the 9 samples left (not the 100 it asks for)."""
    shape = run_shape(Config(), 48)
    assert (shape.screening, shape.validation) == (31, 14)
    assert (shape.round_cost, shape.smallest_budget(1), shape.smallest_budget(3)) == (65, 65, 195)
    big = run_shape(Config(), 400)  # the paper's sizes fit: 36 + 120 + a batch of 25
    assert (big.screening, big.validation, big.round_cost) == (36, 120, 25 + 36 + 36)
    assert run_shape(Config(validation=False), 48).screening == 36
    assert run_shape(released(), 400).smallest_budget(1) == 600 + 97
    small = run_shape(released(), 48)
    assert (small.screening, small.validation, small.smallest_budget(1)) == (36, 9, 72 + 75)
    assert (run_shape(released(), 145).screening, run_shape(released(), 145).validation) == (36, 100)
    assert run_shape(released(), 120).validation == 120 - 7 - 36


@pytest.mark.parametrize(("budget", "refused"), [(64, True), (65, False)])
def test_a_budget_below_one_round_is_refused_before_anything_is_spent(budget, refused):
    """Budget 100 for 48 samples used to run 0 rounds and exit 0; a budget that
    cannot pay for one round is a BudgetError (exit 2) before any execution."""
    llm = InProcessLLM()
    run = iterate(Config(budget=budget), ToyTask(n_train=48), llm)
    if refused:
        with pytest.raises(BudgetError, match="raise --budget to at least 65"):
            next(run)
        assert llm.calls == []
    else:
        _, events = next(run)
        assert isinstance(events[0], RunStarted)
