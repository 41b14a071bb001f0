"""Unit tests of paired statistics and the regression counts S, D, U (paper Eq. 2-3)."""

from __future__ import annotations

import pytest

from stratune_core.evaluation import (
    paired_stats,
    regression_counts,
    screening_gain_threshold,
)
from stratune_core.records.errors import CoreInvariantError

# an ANLS-like continuous task: solved at >= 0.9, delta = 0.10
BASE = [0.95, 0.92, 1.0, 0.5, 0.3, 0.85]
CAND = [0.93, 0.80, 1.0, 0.62, 0.3, 0.91]


def test_continuous_counts_by_hand() -> None:
    """Solved b = {0,1,2}; D = {1} (solved->failed, also d=-0.12); U = {5} new + {3} d=+0.12."""
    c = regression_counts(BASE, CAND, success_threshold=0.9)
    assert c.solved_base == frozenset({0, 1, 2})
    assert c.lost == frozenset({1})
    assert c.gained == frozenset({3, 5})
    assert (c.S, c.D, c.U) == (3, 1, 2)


def test_continuous_stats_by_hand() -> None:
    """d = (-0.02, -0.12, 0, 0.12, 0, 0.06): gain 0.04/6, 2 wins, 2 losses, m~ = 0.09."""
    s = paired_stats(BASE, CAND, success_threshold=0.9)
    assert s.n == 6
    assert s.gain == pytest.approx(0.04 / 6)
    assert (s.wins, s.losses) == (2, 2)
    assert s.m_tilde == pytest.approx(0.09)
    assert screening_gain_threshold(s, 0.001) == pytest.approx(0.015)


def test_large_drop_while_still_solved_counts_in_d() -> None:
    """1.0 -> 0.9 stays solved but d = -0.1 (float -0.0999...) counts in D via the delta term."""
    c = regression_counts([1.0], [0.9], success_threshold=0.9)
    assert c.lost == frozenset({0})


def test_large_rise_without_solving_counts_in_u() -> None:
    """0.3 -> 0.4 is d = 0.1000...03, within tolerance of delta, so it counts in U."""
    c = regression_counts([0.3], [0.4], success_threshold=0.9)
    assert c.gained == frozenset({0})
    assert c.lost == frozenset()


def test_threshold_tolerance() -> None:
    """A score 1e-12 below the success threshold is solved (1e-9 tolerance)."""
    c = regression_counts([0.9 - 1e-12], [0.0], success_threshold=0.9)
    assert c.S == 1 and c.D == 1


def test_d_without_delta() -> None:
    """With d_uses_delta=False a solved->solved drop is not a regression but U keeps delta."""
    c = regression_counts([1.0, 0.3], [0.9, 0.45], success_threshold=0.9, d_uses_delta=False)
    assert c.D == 0
    assert c.gained == frozenset({1})


def test_no_delta_at_all() -> None:
    """delta=None counts only success flips in both D and U."""
    c = regression_counts([1.0, 0.3], [0.9, 0.45], success_threshold=0.9, delta=None)
    assert (c.D, c.U) == (0, 0)


def test_binary_m_tilde_is_one() -> None:
    """For binary scores m~ = 1, so eps_s is one net sample: 1/|Q|."""
    s = paired_stats([1, 0, 0, 1], [0, 1, 1, 1], success_threshold=1.0)
    assert s.m_tilde == 1.0
    assert screening_gain_threshold(s, 0.0025) == pytest.approx(0.25)


def test_no_difference_gives_eps0() -> None:
    """With no nonzero d, m~ = 0 and eps_s = eps0."""
    s = paired_stats([0.5, 1.0], [0.5, 1.0], success_threshold=1.0)
    assert s.m_tilde == 0.0 and s.wins == s.losses == 0
    assert screening_gain_threshold(s, 0.0025) == 0.0025


def test_empty_stats() -> None:
    """An empty set gives zero counts and eps_s = eps0."""
    s = paired_stats([], [], success_threshold=1.0)
    assert (s.n, s.gain, s.counts.S) == (0, 0.0, 0)
    assert screening_gain_threshold(s, 0.001) == 0.001


def test_misaligned_scores_raise() -> None:
    """Paired scores of different lengths are a broken invariant."""
    with pytest.raises(CoreInvariantError, match="same samples"):
        paired_stats([1.0], [1.0, 0.0], success_threshold=1.0)
