"""The reserve for final skill selection (docs/design.md, "Budget").

Paper profile (`ReserveRule.EXACT`): final skill selection runs the current skill and the saved
contenders on as many training samples as the remaining budget affords, up to the whole
training set. The reserve held back from the rounds is exactly what that would cost now: the
executions of the current skill and of every contender on the training samples they have not
run yet (the ledger answers the others for free). It is 0 while nothing is saved, grows when a
candidate is saved, and shrinks as the pool's skills run on more samples. The released
profile holds a fixed reserve instead (`Config.reserve_rule`, `Config.reserve`).

The budget record carries the reserve held right now (`Budget.reserve`); `refresh` recomputes
it after every change to the ledger or the pool, so admission control always sees it.
"""

from __future__ import annotations

import attrs

from stratune_core.round.pool import contenders, rivals
from stratune_core.state.context import Env
from stratune_core.state.state import State


def exact_reserve(state: State, env: Env) -> int:
    """New executions final skill selection needs for the current pool on the training set."""
    seats, common = env.config.final_seats, env.config.final_min_common
    # the ranking only if some are left out
    pool = rivals(state) if seats is None and not common else contenders(state, seats, common)
    if not pool:
        return 0
    n = len(env.train_ids)
    return sum(n - len(state.ledger.executed_ids(sid)) for sid in (state.current_id, *pool))


def held(state: State, env: Env) -> int:
    """The reserve to hold now: the fixed one, or the exact one (at most what is left)."""
    if not env.shape.exact_reserve:
        return env.shape.reserve
    return min(exact_reserve(state, env), state.budget.remaining)


def refresh(state: State, env: Env) -> State:
    value = held(state, env)
    if value == state.budget.reserve:
        return state
    return state.evolve(budget=attrs.evolve(state.budget, reserve=value))
