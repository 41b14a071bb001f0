"""A run's shape: what a config gives for a training set of a given size, before anything runs.

The one home of the derived sizes (budget B, the reserve for final skill selection, batches, the
I2/I3 ranking subset, screening and validation set sizes) and of the smallest budget that pays
for a round. The run itself (`state/state.py`, `round/candidate_eval.py`) and the shell's `plan`, `train`
and viewer all read them from here.
"""

from __future__ import annotations

import math

from attrs import frozen

from stratune_core.config.knobs import Config
from stratune_core.records.errors import BudgetError


@frozen(kw_only=True)
class RunShape:
    n_train: int
    budget: int  # B, target executions on training samples
    # held back for final skill selection at the start: the fixed reserve, or 0 when the reserve
    # is exact (it grows with the saved pool as the run goes; `round/reserve.py`) or selection is off
    reserve: int
    exact_reserve: bool  # the reserve follows the saved pool (paper) rather than being fixed
    n_batches: int  # batches actually made: at most one per training sample
    batch: int  # samples in the largest batch
    ranking: int  # the fixed I2/I3 ranking subset
    screening: int  # |Q_s| at most: the quota, or what the batch and Q_v leave of a small set
    # |Q_v| (0 when validation is off); when Q_s keeps its quota, what the batch and Q_s leave
    validation: int

    @property
    def usable(self) -> int:
        """What the rounds may spend at the start: the budget less the reserve."""
        return max(0, self.budget - self.reserve)

    @property
    def round_cost(self) -> int:
        """The most a round can need before it starts: its batch, then one candidate screened
        (the candidate on all of Q_s, the current skill on those of Q_s it has not run yet,
        which in the first round is all of them). `step.stop_reason` asks for this much (less
        what the ledger already holds) on top of the reserve."""
        outside_batch = max(0, self.n_train - self.batch)
        return self.batch + self.screening + min(self.screening, outside_batch)

    def smallest_budget(self, rounds: int) -> int:
        """The smallest budget with which `rounds` rounds that each screen one candidate are
        sure to start, on top of the fixed reserve (an exact reserve is 0 until a candidate is
        saved). For one round this is exact: a smaller budget is refused."""
        return self.reserve + rounds * self.round_cost

    def require_one_round(self) -> None:
        """A budget that cannot pay for one round is refused before anything is spent."""
        need = self.smallest_budget(1)
        if self.budget < need:
            held = f", plus the reserve of {self.reserve}" if self.reserve else ""
            raise BudgetError(
                f"budget: {self.budget} executions cannot pay for one round (a batch of "
                f"{self.batch} and one candidate screened on {self.screening} samples: up to "
                f"{self.round_cost} executions{held}); raise --budget to at least {need}"
            )


def run_shape(config: Config, n_train: int) -> RunShape:
    budget = config.budget_for(n_train)
    fixed = config.reserve_for(n_train)
    reserve = (fixed or 0) if config.final_selection else 0
    n_batches = min(config.n_batches, n_train)
    batch = math.ceil(n_train / n_batches) if n_batches else 0
    validation = config.validation_size(n_train) if config.validation else 0
    quota = config.screen_solved + config.screen_random
    outside_batch = max(1, n_train - n_train // max(1, n_batches))  # Q_s never holds the batch
    if config.screening_keeps_quota:
        screening = min(quota, outside_batch)
        validation = min(validation, max(0, outside_batch - screening))
    else:  # Q_s leaves room for Q_v (`sets.screening_set`)
        screening = min(quota, max(1, outside_batch - validation))
    return RunShape(
        n_train=n_train,
        budget=budget,
        reserve=reserve,
        exact_reserve=fixed is None and config.final_selection,
        n_batches=n_batches,
        batch=batch,
        # the ranking subset is kept out of I2/I3 drafts' evaluation sets, so on small training
        # sets it must leave most samples for screening and validation
        ranking=min(config.ranking_size_for(n_train), max(2, n_train // 4)),
        screening=screening,
        validation=validation,
    )
