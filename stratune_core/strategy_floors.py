"""The released code's strategy-schedule floors (notes/official_stratune.md §2.2, §4.8).

Not in the paper: a run whose selector never tried I2 is made to try it once 35% of the budget
is spent, and I3 likewise at 50%. It keeps a selector that always answers I1 (a weak optimizer
LLM does) from leaving two of the three strategies untested. Off in the `paper` profile.
"""

from __future__ import annotations

from stratune_core.config import Config
from stratune_core.enums import Strategy
from stratune_core.state import State


def floor_strategy(state: State, config: Config) -> Strategy | None:
    """The strategy this round must use under the floors, or None when the selector is free."""
    if not config.strategy_floors or state.round == 0 or state.budget.limit == 0:
        return None
    spent = state.budget.spent / state.budget.limit
    tried = {choice.strategy for choice in state.history.choices}
    for strategy, at in ((Strategy.I2, config.floor_i2_frac), (Strategy.I3, config.floor_i3_frac)):
        if strategy not in tried and spent >= at:
            return strategy
    return None
