"""Initial screening and the saved-candidate rule (paper App. B; docs/design.md, "Candidate
evaluation")."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from stratune_core.config.knobs import Config
from stratune_core.evaluation.gates import (
    REGRESSION_REASONS,
    Gate,
    Outcome,
    gain_at_least,
    outcome,
    regression_gates,
)
from stratune_core.evaluation.paired import DIFF_TOL, paired_stats, screening_gain_threshold
from stratune_core.evaluation.rules import Condition, Rule, RuleCheck, Term, at_least, at_most, rule
from stratune_core.records.enums import CheckName, Reason, Stage


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
    return save_check(result, config).holds


def save_check(result: Outcome, config: Config, guard_severe: int = 0) -> RuleCheck:
    """`save_rule` as a table; with `guard_severe_max` set (released) at most that many
    regressions among the random part of Q_s (`guard_severe`)."""
    stats = result.stats
    checks = {c.name: c for c in result.checks}
    regression = [
        Condition(term=Term(name.value), passed=check.passed, value=check.value,
                  limit=check.limit)
        for name in (CheckName.LB_D_S, CheckName.LB_D_DU) if (check := checks.get(name))
        and check.reason in REGRESSION_REASONS
    ]
    return rule(Rule.SAVE, (
        at_least(Term.SAMPLES, stats.n, 1),
        *regression,
        Condition(term=Term.WINS_VS_LOSSES, value=stats.wins - stats.losses, limit=0.0,
                  passed=not config.save_needs_wins or stats.wins >= stats.losses),
        Condition(term=Term.GAIN_POSITIVE, passed=stats.gain > DIFF_TOL, value=stats.gain,
                  limit=0.0),
        at_most(Term.GUARD_SEVERE, guard_severe, config.guard_severe_max or 0,
                applies=config.guard_severe_max is not None),
    ))
