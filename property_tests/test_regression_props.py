"""Properties of S, D, U, paired statistics and the screening decision (paper Eq. 2-3, App. B)."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from property_tests.strategies import score_pairs
from stratune_core.config.profiles import paper, released
from stratune_core.evaluation import (
    paired_stats,
    regression_counts,
    screen,
    screening_gain_threshold,
    validate,
)
from stratune_core.records.enums import Reason


@given(score_pairs(), st.booleans())
def test_counts_are_sets_with_bounds(p, d_uses_delta: bool) -> None:
    """D is a subset of the solved set, D and U are disjoint, so D <= S and D + U <= |Q|."""
    base, cand, thr, delta = p
    c = regression_counts(base, cand, success_threshold=thr, delta=delta, d_uses_delta=d_uses_delta)
    assert (len(c.solved_base), len(c.lost), len(c.gained)) == (c.S, c.D, c.U)
    assert c.lost <= c.solved_base
    assert not c.lost & c.gained
    assert c.D <= c.S and len(base) >= c.D + c.U
    assert all(cand[i] < base[i] for i in c.lost) and all(cand[i] > base[i] for i in c.gained)


@given(score_pairs(binary=True))
def test_binary_swap_exchanges_d_and_u(p) -> None:
    """Binary scores: swapping base and candidate turns newly failed into newly solved."""
    base, cand, thr, delta = p
    fwd = regression_counts(base, cand, success_threshold=thr, delta=delta)
    back = regression_counts(cand, base, success_threshold=thr, delta=delta)
    assert fwd.lost == back.gained and fwd.gained == back.lost
    assert (fwd.D, fwd.U) == (back.U, back.D)


@given(score_pairs(binary=True))
def test_binary_delta_is_irrelevant(p) -> None:
    """For binary scores D and U are the success flips whatever delta is."""
    base, cand, thr, _ = p
    with_delta = regression_counts(base, cand, success_threshold=thr, delta=0.1)
    without = regression_counts(base, cand, success_threshold=thr, delta=None)
    assert with_delta == without


@given(score_pairs(binary=False))
def test_delta_terms_only_add(p) -> None:
    """The delta terms can only add samples: D without delta is a subset of D with it."""
    base, cand, thr, delta = p
    full = regression_counts(base, cand, success_threshold=thr, delta=delta)
    no_d = regression_counts(base, cand, success_threshold=thr, delta=delta, d_uses_delta=False)
    none = regression_counts(base, cand, success_threshold=thr, delta=None)
    assert no_d.lost == none.lost <= full.lost
    assert no_d.gained == full.gained and none.gained <= full.gained


@given(score_pairs(), st.randoms(use_true_random=False))
def test_stats_do_not_depend_on_sample_order(p, rnd: random.Random) -> None:
    """Permuting the samples permutes the index sets and leaves every number unchanged."""
    base, cand, thr, delta = p
    perm = list(range(len(base)))
    rnd.shuffle(perm)
    a = paired_stats(base, cand, success_threshold=thr, delta=delta)
    b = paired_stats(
        [base[i] for i in perm], [cand[i] for i in perm], success_threshold=thr, delta=delta
    )
    assert (a.n, a.gain, a.wins, a.losses, a.m_tilde) == (b.n, b.gain, b.wins, b.losses, b.m_tilde)
    assert frozenset(perm[i] for i in b.counts.lost) == a.counts.lost
    assert frozenset(perm[i] for i in b.counts.gained) == a.counts.gained


@given(score_pairs(), st.floats(0, 0.05))
def test_stats_ranges(p, eps0: float) -> None:
    """|gain| <= 1, wins + losses <= n, m~ in [0, 1], eps_s >= eps0; binary m~ is 0 or 1."""
    base, cand, thr, delta = p
    s = paired_stats(base, cand, success_threshold=thr, delta=delta)
    assert -1.0 <= s.gain <= 1.0 and s.wins + s.losses <= s.n
    assert 0.0 <= s.m_tilde <= 1.0
    assert screening_gain_threshold(s, eps0) >= eps0
    if set(base) | set(cand) <= {0.0, 1.0}:
        assert s.m_tilde in (0.0, 1.0)


@given(score_pairs(), st.floats(0, 0.05), st.sampled_from([paper(), released()]))
def test_decisions_follow_their_checks(p, eps0: float, cfg) -> None:
    """passed iff every check passed; failed lists the failed checks' reasons in order;
    saveable only for a positive gain below eps_s with both regression checks passed."""
    base, cand, thr, delta = p
    cfg = cfg.replace(delta=delta)
    for rule in (screen, validate):
        out = rule(base, cand, config=cfg, eps0=eps0, success_threshold=thr)
        if not base:
            assert out.failed == (Reason.EMPTY_SET,) and not out.passed
            continue
        assert out.passed == all(c.passed for c in out.checks)
        assert out.failed == tuple(c.reason for c in out.checks if not c.passed)
        if out.saveable:
            assert rule is screen and not out.passed
            assert 0 < out.stats.gain < out.threshold
            assert not {Reason.REGRESSIONS_AMONG_SOLVED, Reason.LOSSES_AMONG_CHANGES} & set(
                out.failed
            )
