"""The released rule for a batch without failures (docs/released-code.md §2.2;
`Config.i2_without_failures`): when s_t fails no sample of the batch and none it ran elsewhere
(residual pooling finds nothing), a refinement under way still takes its I2 step, the optimizer
choosing the form; otherwise, and in the paper profile, the round is skipped."""

from __future__ import annotations

import numpy as np
import pytest

import stratune_core.state.events as ev
from stratune_core.budget.admission import Budget
from stratune_core.config.knobs import Config
from stratune_core.config.profiles import released
from stratune_core.operators.refinement import Refinement
from stratune_core.records.enums import ChoiceRule, SkipReason, Strategy
from stratune_core.round.step import round_step
from stratune_core.state.context import Env
from stratune_core.state.state import State, initial_state
from tests.support.toy import RULES, InProcessLLM, ToyTask

# no [X] words: a skill with the rules for [U], [R] and [D] solves every sample
TASK = ToyTask(n_train=48, continuous=True, markers=("U", "R", "D", "P"))
RELEASED = released().replace(seed=3)


def _solving(config: Config, steps: int = 2, remaining: int | None = None) -> State:
    """Round 5 with an s_t that solves everything and a refinement of `steps` steps on it."""
    state = initial_state(config, TASK)
    text = state.current_text + "\n" + "\n".join(RULES[m] for m in "URD")
    state, cur, _ = state.with_skill(text, state.current_id)
    refinement = Refinement(started=steps > 0, steps=steps, intermediate_id=cur if steps else None)
    state = state.evolve(current_id=cur, round=5, refinement=refinement)
    if remaining is not None:
        budget = state.budget
        state = state.evolve(budget=Budget(limit=budget.limit, spent=budget.limit - remaining,
                                           reserve=0))
    return state


def _round(config: Config, state: State):
    env = Env.build(config, TASK, InProcessLLM())
    _, events = round_step(state, env, np.random.default_rng(0))
    return events


def _of(events, cls):
    return [e for e in events if isinstance(e, cls)]


def test_a_batch_without_failures_takes_an_i2_step():
    events = _round(RELEASED, _solving(RELEASED))
    (batch,) = _of(events, ev.BatchExecuted)
    assert batch.solved == len(batch.sample_ids)  # nothing failed, nothing was pooled
    assert not _of(events, ev.ResidualsPooled) and not _of(events, ev.RoundSkipped)
    (chosen,) = _of(events, ev.OperatorChosen)
    assert (chosen.strategy, chosen.source) == (Strategy.I2, ChoiceRule.NO_FAILURES)
    assert chosen.form is not None  # the optimizer chose it (a selection call)
    assert _of(events, ev.RefinementAdvanced)  # the step was taken


@pytest.mark.parametrize("case", ["field off", "paper", "no refinement", "I2 unaffordable",
                                  "other selector"])
def test_otherwise_the_round_is_skipped(case):
    config, state = RELEASED, None
    if case == "field off":
        config = RELEASED.replace(i2_without_failures=False)
    elif case == "paper":
        config = Config(seed=3)
    elif case == "no refinement":
        state = _solving(config, steps=0)
    elif case == "I2 unaffordable":  # the guards' six I2 rounds no longer fit
        state = _solving(config, remaining=11 * len(_solving(config).ranking_ids))
    else:
        config = RELEASED.replace(selector="random")
    events = _round(config, state or _solving(config))
    assert [e.reason for e in _of(events, ev.RoundSkipped)] == [SkipReason.NO_FAILURES]
    assert not _of(events, ev.OperatorChosen)
