"""The released code's strategy-schedule floors (not in the paper; see docs/design.md).

A run whose selector never tried I2 is made to try it once 35% of the budget is spent, and I3
likewise at 50%. It keeps a selector that always answers I1 (a weak optimizer LLM does) from
leaving two of the three strategies untested, as long as the affordability guards offer the
strategy (`round/affordability.py`). Off in the `paper` profile. Only the LLM selector
applies the floors (`selection/selectors/adaptive.py`): an ablation selector is what is being studied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stratune_core.records.enums import Strategy

if TYPE_CHECKING:
    from stratune_core.selection.selectors.base import SelectorContext


def floor_strategy(context: SelectorContext) -> Strategy | None:
    """The strategy this round must use under the floors, or None when the selector is free."""
    config, budget = context.config, context.budget
    floors = config.strategy_floors
    if floors is None or context.round == context.first_round or budget.limit == 0:
        return None
    spent = budget.spent / budget.limit
    tried = {choice.strategy for choice in context.history.choices}
    for strategy, at in ((Strategy.I2, floors.i2_frac), (Strategy.I3, floors.i3_frac)):
        if strategy not in tried and spent >= at and strategy in context.offered:
            return strategy
    return None
