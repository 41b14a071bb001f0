"""Candidate evaluation's rules (paper App. B), pure functions of score vectors and a `Config`:
paired statistics, the Wilson bound, the gates of screening and validation, probation, the
branch rule, futility, final selection's comparison, and the sample sets and batches they are
drawn on. Their running on the state is in the round layer (`round/stages.py`,
`round/screening_run.py`, `round/candidate_eval.py`, `round/pool.py`, `round/final.py`)."""

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
