"""Candidate evaluation (paper App. B). The rules, re-exported here, are pure functions of score
vectors and a `Config`: paired statistics, the Wilson bound, screening, validation, final
selection. Their running on the state lives beside them: the sets (`evaluation/sets.py`), a
stage (`evaluation/stages.py`), screening one candidate (`evaluation/screening_run.py`), the
whole evaluation (`evaluation/candidate_eval.py`), the saved pool (`evaluation/pool.py`) and
final skill selection (`evaluation/final.py`)."""

from __future__ import annotations

from stratune_core.evaluation.final_selection import final_compare, split_final_set
from stratune_core.evaluation.gates import (
    Check,
    Gate,
    Outcome,
    gain_at_least,
    gain_positive,
    losses_among_changes,
    outcome,
    regression_gates,
    regressions_among_solved,
    run_gates,
    wins_not_below_losses,
)
from stratune_core.evaluation.paired import (
    PairedStats,
    RegressionCounts,
    paired_stats,
    regression_counts,
    screening_gain_threshold,
)
from stratune_core.evaluation.screening import screen, screening_gates
from stratune_core.evaluation.validation import validate, validation_gates, validation_threshold
from stratune_core.evaluation.wilson import Z_90, wilson_lower_bound

__all__ = [
    "Z_90",
    "Check",
    "Gate",
    "Outcome",
    "PairedStats",
    "RegressionCounts",
    "final_compare",
    "gain_at_least",
    "gain_positive",
    "losses_among_changes",
    "outcome",
    "paired_stats",
    "regression_counts",
    "regression_gates",
    "regressions_among_solved",
    "run_gates",
    "screen",
    "screening_gain_threshold",
    "screening_gates",
    "split_final_set",
    "validate",
    "validation_gates",
    "validation_threshold",
    "wilson_lower_bound",
    "wins_not_below_losses",
]
