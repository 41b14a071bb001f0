"""The released code's branch rule (docs/released-code.md §4.6): a candidate that is neither
accepted nor clearly worse, whose wins and losses are both numerous and each spread over two or
more strata, is saved for final skill selection without replacing s_t. Such a candidate solves a
different part of the task than s_t: final selection may still prefer it on a larger common set."""

from __future__ import annotations

import math
from collections.abc import Sequence

from attrs import frozen

from stratune_core.config import Config
from stratune_core.evaluation.gates import Outcome
from stratune_core.evaluation.paired import DIFF_TOL
from stratune_core.evaluation.wilson import wilson_lower_bound

MIN_SIDE = 2  # wins and losses each at least max(2, ceil(frac * changes))
MIN_STRATA = 2  # ... in at least two strata each
MAX_GUARD_LOSSES = 1  # at most one regression among the random part of Q_s


@frozen(kw_only=True)
class Branch:
    wins: int
    losses: int
    win_strata: int
    loss_strata: int


def branch_rule(
    base: Sequence[float],
    cand: Sequence[float],
    *,
    outcome: Outcome,
    strata: Sequence[str],
    random_part: Sequence[bool],
    config: Config,
) -> Branch | None:
    """The branch, or None when the rule does not hold. `strata[i]` and `random_part[i]` (was
    sample i drawn as a random, not a solved, screening sample) are aligned with the scores.

    Needs: wins + losses >= `ready_changes`; wins, losses >= max(2, ceil(frac * changes)), each
    in >= 2 strata; mean positive and mean negative change each >= eps_s / 2;
    LB(D, D+U) <= `branch_lb`, LB(D, S) <= `lb_limit`; at most one loss among random samples.
    """
    stats, counts = outcome.stats, outcome.stats.counts
    changes = stats.wins + stats.losses
    if stats.n == 0 or changes < config.ready_changes:
        return None
    side = max(MIN_SIDE, math.ceil(config.branch_min_frac * changes - 1e-9))
    if stats.wins < side or stats.losses < side:
        return None
    diffs = [c - b for b, c in zip(base, cand, strict=True)]
    win_strata = {strata[i] for i, d in enumerate(diffs) if d > DIFF_TOL}
    loss_strata = {strata[i] for i, d in enumerate(diffs) if d < -DIFF_TOL}
    if len(win_strata) < MIN_STRATA or len(loss_strata) < MIN_STRATA:
        return None
    half = outcome.threshold / 2
    up = math.fsum(max(d, 0.0) for d in diffs) / stats.n
    down = math.fsum(max(-d, 0.0) for d in diffs) / stats.n
    if up < half - DIFF_TOL or down < half - DIFF_TOL:
        return None
    if wilson_lower_bound(counts.D, counts.D + counts.U, config.z) > config.branch_lb:
        return None
    if wilson_lower_bound(counts.D, counts.S, config.z) > config.lb_limit:
        return None
    if sum(random_part[i] for i in counts.lost) > MAX_GUARD_LOSSES:
        return None
    return Branch(wins=stats.wins, losses=stats.losses, win_strata=len(win_strata),
                  loss_strata=len(loss_strata))
