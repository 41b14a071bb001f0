"""Paired statistics of a candidate c against a reference b on one evaluation set (App. B).

Scores are aligned by position: `base_scores[i]` and `cand_scores[i]` are the two executions of
the same sample. Index sets in `RegressionCounts` refer to those positions.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from attrs import frozen

from stratune_core.records.errors import CoreInvariantError

TOL = 1e-9  # tolerance at the success threshold and at the delta threshold (float scores)
DIFF_TOL = 1e-12  # a difference smaller than this is float noise, not a win or a loss


@frozen(kw_only=True)
class RegressionCounts:
    """Paper Eq. 3. `S`, `D`, `U` are the sizes of `solved_base`, `lost`, `gained`."""

    S: int
    D: int
    U: int
    solved_base: frozenset[int]
    lost: frozenset[int]
    gained: frozenset[int]


@frozen(kw_only=True)
class PairedStats:
    """Mean gain, wins, losses and the median absolute nonzero difference m~ on n pairs."""

    n: int
    gain: float
    wins: int
    losses: int
    m_tilde: float
    counts: RegressionCounts


def _check_aligned(base: Sequence[float], cand: Sequence[float]) -> None:
    if len(base) != len(cand):
        raise CoreInvariantError(
            f"paired scores: base has {len(base)} scores, candidate {len(cand)}; "
            "both skills must be executed on the same samples"
        )


def regression_counts(
    base_scores: Sequence[float],
    cand_scores: Sequence[float],
    *,
    success_threshold: float,
    delta: float | None = 0.10,
    d_uses_delta: bool = True,
) -> RegressionCounts:
    """S, D, U of paper Eq. 3, as sets so that each sample counts at most once.

    - D = (S_b minus S_c) plus {x in S_b : d_x <= -delta}
    - U = (S_c minus S_b) plus {x : d_x >= delta}

    `delta=None` drops the delta term from both D and U. `d_uses_delta=False` drops it from D
    only: final selection counts in D only samples solved by the selected skill and failed by the
    candidate, while U keeps Eq. 3 (docs/design.md, "Final skill selection"; the released
    code's tournament does the same).
    Both thresholds are compared with a 1e-9 tolerance. D and U are disjoint: every sample in D
    has d_x < 0 and every sample in U has d_x > 0 (for delta > 1e-9).
    """
    _check_aligned(base_scores, cand_scores)
    thr = success_threshold - TOL
    solved_b = frozenset(i for i, b in enumerate(base_scores) if b >= thr)
    solved_c = frozenset(i for i, c in enumerate(cand_scores) if c >= thr)
    diffs = [c - b for b, c in zip(base_scores, cand_scores, strict=True)]
    lost = set(solved_b - solved_c)
    gained = set(solved_c - solved_b)
    if delta is not None:
        if d_uses_delta:
            lost.update(i for i in solved_b if diffs[i] <= -delta + TOL)
        gained.update(i for i, d in enumerate(diffs) if d >= delta - TOL)
    return RegressionCounts(
        S=len(solved_b),
        D=len(lost),
        U=len(gained),
        solved_base=solved_b,
        lost=frozenset(lost),
        gained=frozenset(gained),
    )


def paired_stats(
    base_scores: Sequence[float],
    cand_scores: Sequence[float],
    *,
    success_threshold: float,
    delta: float | None = 0.10,
    d_uses_delta: bool = True,
) -> PairedStats:
    """Paired gain (Eq. 2), wins/losses and m~ over the aligned scores; zeros when empty."""
    counts = regression_counts(
        base_scores,
        cand_scores,
        success_threshold=success_threshold,
        delta=delta,
        d_uses_delta=d_uses_delta,
    )
    diffs = [c - b for b, c in zip(base_scores, cand_scores, strict=True)]
    n = len(diffs)
    nonzero = [abs(d) for d in diffs if abs(d) > DIFF_TOL]
    return PairedStats(
        n=n,
        # fsum: the gain must not depend on the order the samples were listed in
        gain=math.fsum(diffs) / n if n else 0.0,
        wins=sum(d > DIFF_TOL for d in diffs),
        losses=sum(d < -DIFF_TOL for d in diffs),
        m_tilde=statistics.median(nonzero) if nonzero else 0.0,
        counts=counts,
    )


def screening_gain_threshold(stats: PairedStats, eps0: float) -> float:
    """eps_s = max(eps0, m~/|Q|); for binary scores m~ = 1, i.e. one net sample."""
    if stats.n == 0:
        return eps0
    return max(eps0, stats.m_tilde / stats.n)
