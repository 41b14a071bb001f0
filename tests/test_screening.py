"""Unit tests of the screening decision (paper App. B)."""

from __future__ import annotations

import pytest

from stratune_core.config.profiles import paper
from stratune_core.evaluation import screen
from stratune_core.records.enums import Reason, Stage

CFG = paper()


def _binary(n_solved: int, n: int, lost: int, gained: int) -> tuple[list[int], list[int]]:
    base = [1] * n_solved + [0] * (n - n_solved)
    cand = list(base)
    for i in range(lost):
        cand[i] = 0
    for i in range(gained):
        cand[n_solved + i] = 1
    return base, cand


def test_36_samples_3_losses_among_20_solved_passes() -> None:
    """36 samples, 20 solved by b; c loses 3 of them and gains 5 of the 16 others.

    gain = (5 - 3)/36 = 0.0556 >= eps_s = max(0.0025, 1/36 = 0.0278); wins 5 >= losses 3.
    LB(D=3, S=20): p = 0.15, (0.19106 - 1.2816*sqrt(0.0074016)) / 1.08212 = 0.0747 <= 1/2.
    LB(D=3, D+U=8): p = 0.375, centre 0.375 + 1.6425/16 = 0.47766,
    radicand 0.234375/8 + 1.6425/256 = 0.035713, (0.47766 - 0.24220) / 1.20531 = 0.1954 <= 1/2.
    """
    base, cand = _binary(20, 36, lost=3, gained=5)
    out = screen(base, cand, config=CFG, eps0=0.0025, success_threshold=1.0)
    assert out.stage is Stage.SCREENING
    assert out.passed and out.failed == () and not out.saveable
    assert out.threshold == pytest.approx(1 / 36)
    by_name = {c.name: c for c in out.checks}
    assert by_name["lb_d_s"].value == pytest.approx(0.0747, abs=1e-4)
    assert by_name["lb_d_du"].value == pytest.approx(0.1954, abs=1e-4)
    assert [c.name for c in out.checks] == ["gain", "wins_vs_losses", "lb_d_s", "lb_d_du"]


def test_36_samples_3_losses_2_gains_fails_gain_and_wins() -> None:
    """Same set with only 2 gains: gain = -1/36 and 2 wins < 3 losses; LB(3, 5) = 0.330 passes."""
    base, cand = _binary(20, 36, lost=3, gained=2)
    out = screen(base, cand, config=CFG, eps0=0.0025, success_threshold=1.0)
    assert not out.passed
    assert out.failed == (Reason.GAIN_BELOW_THRESHOLD, Reason.MORE_LOSSES_THAN_WINS)
    assert not out.saveable  # gain is not positive


def test_one_net_sample_exactly_meets_eps_s() -> None:
    """Binary: one net gained sample gives gain = 1/36 = eps_s, which passes."""
    base, cand = _binary(20, 36, lost=0, gained=1)
    out = screen(base, cand, config=CFG, eps0=0.0025, success_threshold=1.0)
    assert out.passed


def test_losses_majority_among_changes_fails() -> None:
    """14 of 20 solved lost, 15 gained: gain 1/36 and wins 15 >= 14 pass, LB(14, 29) = 0.368
    passes, but LB(14, 20) = 0.558 > 1/2 fails (12 losses would give LB(12, 20) = 0.457)."""
    base, cand = _binary(20, 36, lost=14, gained=15)
    out = screen(base, cand, config=CFG, eps0=0.0025, success_threshold=1.0)
    assert out.failed == (Reason.REGRESSIONS_AMONG_SOLVED,)
    assert not out.saveable


def test_flip_balance_check_fails_alone() -> None:
    """Continuous: 3 solved samples lost (D=3, U=0) outweighed by many small gains below delta.

    gain = (40*0.09 - 3*0.5)/46 > eps_s, wins 40 >= losses 3, LB(3, 6 solved) = 0.268 passes,
    LB(D=3, D+U=3) = 1/(1 + z^2/3) = 0.646 > 1/2 fails.
    """
    base = [0.95] * 6 + [0.3] * 40
    cand = [0.45] * 3 + [0.95] * 3 + [0.39] * 40
    out = screen(base, cand, config=CFG, eps0=0.001, success_threshold=0.9)
    assert out.failed == (Reason.LOSSES_AMONG_CHANGES,)
    by_name = {c.name: c for c in out.checks}
    assert by_name["lb_d_du"].value == pytest.approx(0.646204, abs=1e-6)


def test_continuous_small_positive_gain_is_saveable() -> None:
    """ANLS-like: gain 0.04/6 = 0.0067 < eps_s = 0.015 with clean regression checks: saved."""
    base = [0.95, 0.92, 1.0, 0.5, 0.3, 0.85]
    cand = [0.93, 0.80, 1.0, 0.62, 0.3, 0.91]
    out = screen(base, cand, config=CFG, eps0=0.001, success_threshold=0.9)
    assert out.failed == (Reason.GAIN_BELOW_THRESHOLD,)
    assert out.threshold == pytest.approx(0.015)
    assert out.saveable


def test_saveable_ignores_win_loss_check() -> None:
    """Positive gain below eps_s with more losses than wins is still saveable (only the two
    regression checks gate saving): d = (+0.3, -0.12, -0.12, 0), gain 0.015 < eps_s = 0.12/4."""
    base = [0.3, 0.5, 0.5, 0.0]
    cand = [0.6, 0.38, 0.38, 0.0]
    out = screen(base, cand, config=CFG, eps0=0.0025, success_threshold=0.9)
    assert Reason.MORE_LOSSES_THAN_WINS in out.failed
    assert out.stats.gain == pytest.approx(0.015)
    assert out.threshold == pytest.approx(0.03)
    assert out.saveable


def test_empty_set_fails_with_reason() -> None:
    """An empty screening set cannot pass."""
    out = screen([], [], config=CFG, eps0=0.0025, success_threshold=1.0)
    assert not out.passed and out.failed == (Reason.EMPTY_SET,) and out.checks == ()


def test_lb_limit_comes_from_config() -> None:
    """A stricter lb_limit turns a passing LB(D, S) into a failure."""
    base, cand = _binary(20, 36, lost=3, gained=5)
    out = screen(base, cand, config=CFG.replace(lb_limit=0.05), eps0=0.0025, success_threshold=1.0)
    assert Reason.REGRESSIONS_AMONG_SOLVED in out.failed
