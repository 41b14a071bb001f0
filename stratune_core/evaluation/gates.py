"""Small named gates and the loop that runs them: a stage's decision is a tuple of gates.

A gate is a callable `PairedStats -> Check`. Stages differ only in which gates they list, so an
ablation or a profile swaps tuple entries instead of adding branches.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from attrs import field, frozen

from stratune_core.evaluation.paired import DIFF_TOL, PairedStats, RegressionCounts
from stratune_core.evaluation.wilson import wilson_lower_bound
from stratune_core.records.enums import CheckName, Reason, Stage


@frozen(kw_only=True)
class Check:
    """One gate's verdict: `value` compared with `limit`; `reason` names the failure."""

    name: CheckName = field(converter=CheckName)
    passed: bool
    value: float
    limit: float
    reason: Reason


@frozen(kw_only=True)
class Outcome:
    """The result of one stage for one candidate. `failed` lists failed reasons in check order.

    `saveable` (screening only): both regression checks passed and 0 < gain < threshold, the
    paper's rule for keeping a candidate for final selection.
    """

    stage: Stage
    passed: bool
    stats: PairedStats
    threshold: float
    checks: tuple[Check, ...] = field(converter=tuple)
    failed: tuple[Reason, ...] = field(converter=tuple)
    saveable: bool = False


Gate = Callable[[PairedStats], Check]

# the two regression checks (paper App. B); used to decide `saveable`
REGRESSION_REASONS = frozenset({Reason.REGRESSIONS_AMONG_SOLVED, Reason.LOSSES_AMONG_CHANGES})


def gain_at_least(threshold: float) -> Gate:
    def gate(stats: PairedStats) -> Check:
        # DIFF_TOL: a binary gain of exactly one net sample must meet eps_s = 1/|Q| after rounding
        return Check(
            name=CheckName.GAIN,
            passed=stats.gain >= threshold - DIFF_TOL,
            value=stats.gain,
            limit=threshold,
            reason=Reason.GAIN_BELOW_THRESHOLD,
        )

    return gate


def gain_positive(stats: PairedStats) -> Check:
    return Check(
        name=CheckName.GAIN_POSITIVE,
        passed=stats.gain > DIFF_TOL,
        value=stats.gain,
        limit=0.0,
        reason=Reason.GAIN_BELOW_THRESHOLD,
    )


def wins_not_below_losses(stats: PairedStats) -> Check:
    return Check(
        name=CheckName.WINS_VS_LOSSES,
        passed=stats.wins >= stats.losses,
        value=float(stats.wins - stats.losses),
        limit=0.0,
        reason=Reason.MORE_LOSSES_THAN_WINS,
    )


def _regression_bound(
    name: CheckName, reason: Reason, limit: float, z: float, trials: Callable[[RegressionCounts], int]
) -> Gate:
    """LB(D, trials) <= limit: the Wilson lower bound of the regression rate."""

    def gate(stats: PairedStats) -> Check:
        lb = wilson_lower_bound(stats.counts.D, trials(stats.counts), z)
        return Check(name=name, passed=lb <= limit, value=lb, limit=limit, reason=reason)

    return gate


def regressions_among_solved(limit: float, z: float) -> Gate:
    """LB(D, S) <= limit; with S = 0 the bound is 0 and the check passes."""
    return _regression_bound(
        CheckName.LB_D_S, Reason.REGRESSIONS_AMONG_SOLVED, limit, z, lambda c: c.S
    )


def losses_among_changes(limit: float, z: float) -> Gate:
    """LB(D, D+U) <= limit; with no changes the bound is 0 and the check passes."""
    return _regression_bound(
        CheckName.LB_D_DU, Reason.LOSSES_AMONG_CHANGES, limit, z, lambda c: c.D + c.U
    )


def regression_gates(limit: float, z: float) -> tuple[Gate, ...]:
    """What screening and final selection check besides the gain: wins >= losses and both
    regression bounds."""
    return (wins_not_below_losses, regressions_among_solved(limit, z), losses_among_changes(limit, z))


def run_gates(stats: PairedStats, gates: Sequence[Gate]) -> tuple[Check, ...]:
    """Every gate runs (no short-circuit) so the outcome records all failed checks."""
    return tuple(gate(stats) for gate in gates)


def outcome(stage: Stage, stats: PairedStats, threshold: float, gates: Sequence[Gate]) -> Outcome:
    """Run `gates` on `stats`; an empty evaluation set fails with `Reason.EMPTY_SET`."""
    if stats.n == 0:
        return Outcome(
            stage=stage,
            passed=False,
            stats=stats,
            threshold=threshold,
            checks=(),
            failed=(Reason.EMPTY_SET,),
        )
    checks = run_gates(stats, gates)
    failed = tuple(c.reason for c in checks if not c.passed)
    return Outcome(
        stage=stage,
        passed=not failed,
        stats=stats,
        threshold=threshold,
        checks=checks,
        failed=failed,
        saveable=False,
    )
