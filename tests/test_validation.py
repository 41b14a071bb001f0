"""Unit tests of the validation decision (paper App. B) in both profiles."""

from __future__ import annotations

import pytest

from stratune_core.config.profiles import paper, released
from stratune_core.evaluation import validate, validation_threshold
from stratune_core.records.enums import Reason, Stage

# 3 solved samples lost (D = 3, U = 0) and 60 small gains below delta:
# gain = (60*0.09 - 3*0.5)/63 = 0.0619 >= 0.01, but LB(3, 3) = 0.646 > 1/2
FLIP_BASE = [0.95] * 3 + [0.3] * 60
FLIP_CAND = [0.45] * 3 + [0.39] * 60


def test_paper_threshold_is_eps_v() -> None:
    """Paper profile: the validation gain threshold is eps_v = 0.01 whatever eps0 is."""
    assert validation_threshold(paper(), 0.0025) == 0.01
    assert validation_threshold(paper().replace(eps_v=0.02), 0.0025) == 0.02


def test_released_threshold_is_floor_and_eps0() -> None:
    """Released profile: max(eps0, 0.010)."""
    assert validation_threshold(released(), 0.0025) == 0.01
    assert validation_threshold(released(), 0.03) == 0.03


def test_paper_rejects_losses_majority_among_changes() -> None:
    """Paper profile checks LB(D_v, D_v + U_v) <= 1/2: LB(3, 3) = 0.646 fails."""
    out = validate(FLIP_BASE, FLIP_CAND, config=paper(), eps0=0.001, success_threshold=0.9)
    assert out.stage is Stage.VALIDATION
    assert out.failed == (Reason.LOSSES_AMONG_CHANGES,)


def test_released_also_rejects_losses_majority_among_changes() -> None:
    """The released code checks flip_balance_lb = LB(D, D+U) <= 0.5 in validation as well."""
    out = validate(FLIP_BASE, FLIP_CAND, config=released(), eps0=0.001, success_threshold=0.9)
    assert out.failed == (Reason.LOSSES_AMONG_CHANGES,)
    assert [c.name for c in out.checks] == ["gain", "lb_d_du"]


@pytest.mark.parametrize("profile", [paper, released])
def test_issue_11_case_is_rejected_by_both_profiles(profile) -> None:
    """10 solved samples drop to 0.85 (< 0.9, so D = 10), 3 are newly solved
    (U = 3): the gain 1.5/120 = 0.0125 clears both thresholds, but LB(10, 13) = 0.58 > 1/2."""
    base = [1.0] * 10 + [0.0] * 3 + [0.5] * 107
    cand = [0.85] * 10 + [1.0] * 3 + [0.5] * 107
    out = validate(base, cand, config=profile(), eps0=0.001, success_threshold=0.9)
    assert (out.stats.counts.D, out.stats.counts.U) == (10, 3)
    assert out.stats.gain == pytest.approx(0.0125)
    assert not out.passed and out.failed == (Reason.LOSSES_AMONG_CHANGES,)


def test_gain_below_eps_v_fails() -> None:
    """Binary: 1 net sample of 150 is gain 0.0067 < 0.01."""
    base = [1] * 50 + [0] * 100
    cand = [1] * 50 + [1] + [0] * 99
    out = validate(base, cand, config=paper(), eps0=0.0025, success_threshold=1.0)
    assert out.stats.gain == pytest.approx(1 / 150)
    assert out.failed == (Reason.GAIN_BELOW_THRESHOLD,)


def test_binary_two_net_of_150_passes() -> None:
    """Binary: 2 net gains of 150 = 0.0133 >= 0.01; D = 0 so LB passes."""
    base = [1] * 50 + [0] * 100
    cand = [1] * 52 + [0] * 98
    out = validate(base, cand, config=paper(), eps0=0.0025, success_threshold=1.0)
    assert out.passed and out.threshold == 0.01


def test_no_win_loss_check_in_validation() -> None:
    """Validation has no wins >= losses check: 1 big win beats 3 small losses."""
    base = [0.0, 0.5, 0.5, 0.5]
    cand = [1.0, 0.48, 0.48, 0.48]
    out = validate(base, cand, config=paper(), eps0=0.0025, success_threshold=1.0)
    assert out.stats.losses > out.stats.wins
    assert out.passed


def test_empty_validation_set() -> None:
    """An empty validation set fails with EMPTY_SET."""
    out = validate([], [], config=paper(), eps0=0.0025, success_threshold=1.0)
    assert out.failed == (Reason.EMPTY_SET,)
