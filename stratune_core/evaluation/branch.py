"""The released code's branch rule (docs/released-code.md §4.6): a candidate that is neither
accepted nor clearly worse, whose wins and losses are both numerous and each spread over two or
more strata, is saved for final skill selection without replacing s_t. Such a candidate solves a
different part of the task than s_t: final selection may still prefer it on a larger common set."""

from __future__ import annotations

import math
from collections.abc import Sequence

from attrs import frozen

from stratune_core.config.knobs import Config
from stratune_core.config.mechanisms import BranchSaves
from stratune_core.evaluation.gates import Outcome
from stratune_core.evaluation.paired import DIFF_TOL
from stratune_core.evaluation.rules import Rule, RuleCheck, Term, at_least, at_most, rule
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


def guard_losses(outcome: Outcome, random_part: Sequence[bool]) -> int:
    """The released code's `guard_severe`: regressions (D) among the random part of Q_s."""
    return sum(random_part[i] for i in outcome.stats.counts.lost)


def branch_check(
    base: Sequence[float],
    cand: Sequence[float],
    *,
    outcome: Outcome,
    strata: Sequence[str],
    random_part: Sequence[bool],
    config: Config,
) -> RuleCheck:
    """Every condition of the rule, none skipped. `strata[i]` and `random_part[i]` (was sample
    i drawn as a random, not a solved, screening sample) are aligned with the scores.

    Needs: wins + losses >= `ready_changes`; wins, losses >= max(2, ceil(frac * changes)), each
    in >= 2 strata; mean positive and mean negative change each >= eps_s / 2;
    LB(D, D+U) <= `branch_lb`, LB(D, S) <= `lb_limit`; at most one loss among random samples.
    """
    stats, counts = outcome.stats, outcome.stats.counts
    changes = stats.wins + stats.losses
    saves = config.branch_saves or BranchSaves()  # the rule reads the same when it is off
    side = max(MIN_SIDE, math.ceil(saves.min_frac * changes - 1e-9))
    diffs = [c - b for b, c in zip(base, cand, strict=True)]
    win_strata = {strata[i] for i, d in enumerate(diffs) if d > DIFF_TOL}
    loss_strata = {strata[i] for i, d in enumerate(diffs) if d < -DIFF_TOL}
    n = max(1, stats.n)
    half = outcome.threshold / 2
    return rule(Rule.BRANCH, (
        at_least(Term.SAMPLES, stats.n, 1),
        at_least(Term.READY, changes, config.ready_changes),
        at_least(Term.SIDE_WINS, stats.wins, side),
        at_least(Term.SIDE_LOSSES, stats.losses, side),
        at_least(Term.WIN_STRATA, len(win_strata), MIN_STRATA),
        at_least(Term.LOSS_STRATA, len(loss_strata), MIN_STRATA),
        at_least(Term.MEAN_UP, math.fsum(max(d, 0.0) for d in diffs) / n, half, tol=DIFF_TOL),
        at_least(Term.MEAN_DOWN, math.fsum(max(-d, 0.0) for d in diffs) / n, half, tol=DIFF_TOL),
        at_most(Term.LB_D_DU, wilson_lower_bound(counts.D, counts.D + counts.U, config.z),
                saves.lb),
        at_most(Term.LB_D_S, wilson_lower_bound(counts.D, counts.S, config.z), config.lb_limit),
        at_most(Term.GUARD_SEVERE, guard_losses(outcome, random_part), MAX_GUARD_LOSSES),
    ))


def branch_of(check: RuleCheck, outcome: Outcome) -> Branch | None:
    """The branch when the rule holds, else None (`check` says which condition failed)."""
    if not check.holds:
        return None
    by_term = {c.term: c for c in check.conditions}
    return Branch(wins=outcome.stats.wins, losses=outcome.stats.losses,
                  win_strata=int(by_term[Term.WIN_STRATA].value),
                  loss_strata=int(by_term[Term.LOSS_STRATA].value))
