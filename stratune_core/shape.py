"""A run's shape: what a config gives for a training set of a given size, before anything runs.

The one home of the derived sizes (budget B, the reserve for final skill selection, batches, the
I2/I3 ranking subset, screening and validation set sizes). The run itself (`state.py`,
`candidate_eval.py`) and the shell's `plan`, `train` and viewer all read them from here.
"""

from __future__ import annotations

import math

from attrs import frozen

from stratune_core.config import Config


@frozen(kw_only=True)
class RunShape:
    n_train: int
    budget: int  # B, target executions on training samples
    reserve: int  # held back for final skill selection (0 when it is off)
    n_batches: int  # batches actually made: at most one per training sample
    batch: int  # samples in the largest batch
    ranking: int  # the fixed I2/I3 ranking subset
    screening: int  # |Q_s| at most (fewer once samples are excluded)
    validation: int  # |Q_v| (0 when validation is off)

    @property
    def usable(self) -> int:
        """What the rounds may spend: the budget less the reserve."""
        return max(0, self.budget - self.reserve)


def run_shape(config: Config, n_train: int) -> RunShape:
    budget = config.budget_for(n_train)
    reserve = config.reserve_for(n_train) if config.final_selection else 0
    n_batches = min(config.n_batches, n_train)
    return RunShape(
        n_train=n_train,
        budget=budget,
        # the rounds keep at least one execution, so a small budget still runs
        reserve=min(reserve, max(0, budget - 1)),
        n_batches=n_batches,
        batch=math.ceil(n_train / n_batches) if n_batches else 0,
        # the ranking subset is kept out of I2/I3 drafts' evaluation sets, so on small training
        # sets it must leave most samples for screening and validation
        ranking=min(config.ranking_size_for(n_train), max(2, n_train // 4)),
        screening=min(n_train, config.screen_solved + config.screen_random),
        validation=config.validation_size(n_train) if config.validation else 0,
    )
