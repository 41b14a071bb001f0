"""Initial screening and the saved-candidate rule (paper App. B; docs/design.md, "Candidate
evaluation")."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from stratune_core.config import Config
from stratune_core.enums import Reason, Stage
from stratune_core.evaluation.gates import (
    REGRESSION_REASONS,
    Gate,
    Outcome,
    gain_at_least,
    outcome,
    regression_gates,
)
from stratune_core.evaluation.paired import DIFF_TOL, paired_stats, screening_gain_threshold


def screening_gates(config: Config, threshold: float) -> tuple[Gate, ...]:
    return (gain_at_least(threshold), *regression_gates(config.lb_limit, config.z))


def screen(
    base_scores: Sequence[float],
    cand_scores: Sequence[float],
    *,
    config: Config,
    eps0: float,
    success_threshold: float,
) -> Outcome:
    """Pass iff gain >= eps_s, wins >= losses, LB(D,S) <= 1/2 and LB(D,D+U) <= 1/2.

    `saveable` is set when the save rule holds (`save_rule`) and gain < eps_s.
    """
    stats = paired_stats(
        base_scores, cand_scores, success_threshold=success_threshold, delta=config.delta
    )
    threshold = screening_gain_threshold(stats, eps0)
    result = outcome(Stage.SCREENING, stats, threshold, screening_gates(config, threshold))
    if stats.n == 0:
        return result
    below_threshold = Reason.GAIN_BELOW_THRESHOLD in result.failed
    return attrs.evolve(result, saveable=below_threshold and save_rule(result, config))


def save_rule(result: Outcome, config: Config) -> bool:
    """Both regression checks pass and the gain is positive. The win/loss check is not a
    regression check in the paper, so it does not block saving; the released code also
    requires wins >= losses (`save_needs_wins`)."""
    if result.stats.n == 0 or REGRESSION_REASONS.intersection(result.failed):
        return False
    if config.save_needs_wins and result.stats.wins < result.stats.losses:
        return False
    return result.stats.gain > DIFF_TOL
