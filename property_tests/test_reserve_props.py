"""The whole budget (docs/design.md, "Budget"): with the paper's exact reserve, no run
spends more than B, the reserve held never exceeds what is left, it is exactly what final skill
selection needs for the saved pool, and a run that stops for the budget leaves at most one
round (a batch plus one screening) unspent."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import stratune_core.state.events as ev
from stratune_core.config.knobs import Config
from stratune_core.records.enums import StopReason
from stratune_core.round.pool import contenders
from stratune_core.round.reserve import exact_reserve
from stratune_core.round.run import iterate
from stratune_core.state.context import Env
from tests.support.toy import InProcessLLM, ToyOptimizer, ToyTask


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    style=st.sampled_from(["good", "mixed", "trade"]),
    n_train=st.integers(20, 60),
    multiplier=st.sampled_from([2.0, 3.0, 6.0]),
    continuous=st.booleans(),
    cap=st.sampled_from([None, 1, 2, 4]),
    small_sets=st.booleans(),
)
def test_exact_reserve_keeps_the_budget_and_spends_it(
    seed, style, n_train, multiplier, continuous, cap, small_sets
):
    sets = dict(screen_solved=6, screen_random=6, validation_frac=0.15) if small_sets else {}
    config = Config(seed=seed, budget_multiplier=multiplier, archive_cap=cap, **sets)
    task = ToyTask(n_train=n_train, continuous=continuous)
    llm = InProcessLLM(optimizer=ToyOptimizer(style=style))
    env = Env.build(config, task, llm)
    if env.shape.budget < env.shape.smallest_budget(1):
        return  # refused before anything is spent (tests/test_shape.py)
    before_final = None
    events: list = []
    for state, evs in iterate(config, task, llm):
        events.extend(evs)
        b = state.budget
        assert 0 <= b.spent <= b.limit and 0 <= b.reserve <= b.remaining
        if state.finished:
            break
        before_final = state
        # held = exactly what final selection needs now (at most what is left)
        assert b.reserve == min(exact_reserve(state, env), b.remaining)
        assert contenders(state, None) or b.reserve == 0  # nothing saved: nothing held
        if cap is not None:
            assert len(set(state.saved)) <= cap
    finished = events[-1]
    assert isinstance(finished, ev.RunFinished) and finished.spent <= finished.budget
    assert before_final is not None
    if finished.reason is StopReason.BUDGET:
        pool = 1 + len(contenders(before_final, None))
        # one batch plus one screening set, or the crumbs final selection could not place
        assert finished.budget - finished.spent < max(env.shape.round_cost, 2 * pool)
    comparisons = [e for e in events if isinstance(e, ev.FinalComparison)]
    if comparisons and before_final.budget.remaining >= exact_reserve(before_final, env):
        first = comparisons[0]  # the reserve paid for the whole training set
        assert first.selection.stats.n + first.confirmation.stats.n == n_train
