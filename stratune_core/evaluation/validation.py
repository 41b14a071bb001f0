"""Further validation (paper App. B) with the released profile's variants (docs/design.md,
"Profiles")."""

from __future__ import annotations

from collections.abc import Sequence

from stratune_core.config.knobs import Config
from stratune_core.evaluation.gates import (
    Gate,
    Outcome,
    gain_at_least,
    losses_among_changes,
    outcome,
)
from stratune_core.evaluation.paired import paired_stats
from stratune_core.records.enums import Stage


def validation_threshold(config: Config, eps0: float) -> float:
    """Paper: eps_v. Released: max(eps0, 0.010), i.e. a floor > 0 brings eps0 in as well."""
    if config.validation_floor > 0:
        return max(config.eps_v, eps0, config.validation_floor)
    return config.eps_v


def validation_gates(config: Config, threshold: float) -> tuple[Gate, ...]:
    gates: tuple[Gate, ...] = (gain_at_least(threshold),)
    if config.validation_lb_check:
        gates += (losses_among_changes(config.lb_limit, config.z),)
    return gates


def validate(
    base_scores: Sequence[float],
    cand_scores: Sequence[float],
    *,
    config: Config,
    eps0: float,
    success_threshold: float,
) -> Outcome:
    """Pass iff gain >= the validation threshold and (if configured) LB(D, D+U) <= 1/2."""
    stats = paired_stats(
        base_scores, cand_scores, success_threshold=success_threshold, delta=config.delta
    )
    threshold = validation_threshold(config, eps0)
    return outcome(Stage.VALIDATION, stats, threshold, validation_gates(config, threshold))
