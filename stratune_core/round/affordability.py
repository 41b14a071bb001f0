"""The released code's affordability guards (`Config.affordability_guards`): the optimizer's
strategy menu offers I2 and I3 only while the budget left, B - spent, exceeds
`guard_multiplier` (6) times what one of their rounds spends ranking drafts before any
screening: I2 its draft and the intermediate skill on the ranking subset, I3 its K drafts and
s_t. The selection prompt never sees budget figures; the menu is narrowed before it is built,
and when only I1 is left no selection call is made. A rule of the LLM selector alone, like the
strategy floors (an ablation selector is what is being studied).

The released code prices I2 at 12 smoke samples plus its ranking subset and I3 at 3 x 12 plus
twice the subset (its smoke checks); here the costs are those of this implementation's steps.
"""

from __future__ import annotations

from stratune_core.config.knobs import Config
from stratune_core.records.enums import Strategy
from stratune_core.state.state import State


def strategy_costs(config: Config, ranking: int) -> dict[Strategy, int]:
    return {Strategy.I2: 2 * ranking, Strategy.I3: (config.i3_k + 1) * ranking}


def offered_strategies(state: State, config: Config) -> tuple[Strategy, ...]:
    """The strategies the optimizer may choose from this round."""
    guards = config.affordability_guards
    if guards is None:
        return tuple(Strategy)
    remaining = state.budget.remaining
    costs = strategy_costs(config, len(state.ranking_ids))
    return tuple(s for s in Strategy
                 if s not in costs or remaining > guards.multiplier * costs[s])
