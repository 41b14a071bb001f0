"""One comparison of final skill selection and the 60/40 split (paper App. B; docs/design.md,
"Final skill selection")."""

from __future__ import annotations

from collections.abc import Sequence

from stratune_core.config.knobs import Config
from stratune_core.evaluation.gates import (
    Outcome,
    gain_at_least,
    gain_positive,
    outcome,
    regression_gates,
)
from stratune_core.evaluation.paired import paired_stats
from stratune_core.records.enums import Stage
from stratune_core.records.errors import CoreInvariantError


def split_final_set(
    ids: Sequence[str], frac: float = 0.6
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """First max(1, int(frac * n)) ids select, the rest confirm (ids are already in rng order)."""
    if not 0.0 < frac < 1.0:
        raise CoreInvariantError(f"split_final_set: frac must lie in (0, 1), got {frac!r}")
    ids = tuple(ids)
    if not ids:
        return (), ()
    cut = max(1, int(frac * len(ids)))
    return ids[:cut], ids[cut:]


def final_compare(
    sel_base: Sequence[float],
    sel_cand: Sequence[float],
    conf_base: Sequence[float],
    conf_cand: Sequence[float],
    *,
    config: Config,
    success_threshold: float,
    n_train: int = 0,
) -> tuple[Outcome, Outcome]:
    """Compare a saved candidate with the selected skill; it replaces it iff both outcomes pass.

    Selection subset: gain >= max(`final_floor`, m~/n), wins >= losses, LB(D,S) <= 1/2,
    LB(D,D+U) <= 1/2. Confirmation subset: the same with gain > 0. D has no delta term here.
    """
    sel = paired_stats(
        sel_base,
        sel_cand,
        success_threshold=success_threshold,
        delta=config.delta,
        d_uses_delta=False,
    )
    conf = paired_stats(
        conf_base,
        conf_cand,
        success_threshold=success_threshold,
        delta=config.delta,
        d_uses_delta=False,
    )
    threshold = max(final_floor(config, n_train), sel.m_tilde / sel.n if sel.n else 0.0)
    regression = regression_gates(config.lb_limit, config.z)
    return (
        outcome(Stage.FINAL_SELECTION, sel, threshold, (gain_at_least(threshold), *regression)),
        outcome(Stage.FINAL_CONFIRMATION, conf, 0.0, (gain_positive, *regression)),
    )


def final_floor(config: Config, n_train: int) -> float:
    """The selection subset's gain floor: 0.01 (paper); the released code's max(0.010, 2/n)
    with n = |train| (`final_floor_samples` = 2: the gain of two training samples)."""
    per_train = config.final_floor_samples / n_train if n_train > 0 else 0.0
    return max(config.final_gain_floor, per_train)
