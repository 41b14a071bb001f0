"""Unit tests of the Wilson lower bound (paper Eq. 4)."""

from __future__ import annotations

import pytest

from stratune_core.evaluation import wilson_lower_bound
from stratune_core.records.errors import CoreInvariantError


def test_hand_computed_3_of_20() -> None:
    """LB(3, 20) matches the hand computation.

    p = 0.15, z^2 = 1.64249856; centre = 0.15 + z^2/40 = 0.19106246;
    radicand = 0.15*0.85/20 + z^2/1600 = 0.006375 + 0.00102656 = 0.00740156;
    z*sqrt = 1.2816 * 0.08603231 = 0.11025900; (0.19106246 - 0.11025900) / (1 + z^2/20)
    = 0.08080346 / 1.08212493 = 0.074671.
    """
    assert wilson_lower_bound(3, 20) == pytest.approx(0.074671, abs=1e-6)


def test_hand_computed_all_losses_of_3() -> None:
    """LB(3, 3) = 1 / (1 + z^2/3) = 1 / 1.54749952 = 0.646204, above the 1/2 limit."""
    assert wilson_lower_bound(3, 3) == pytest.approx(0.646204, abs=1e-6)


def test_empty_and_zero_losses_are_zero() -> None:
    """LB(k, 0) = 0 and LB(0, n) = 0 exactly."""
    assert wilson_lower_bound(0, 0) == 0.0
    assert wilson_lower_bound(0, 1) == 0.0
    assert wilson_lower_bound(0, 1000) == 0.0


def test_z_changes_the_bound() -> None:
    """A wider interval (larger z) gives a lower bound."""
    assert wilson_lower_bound(5, 10, z=1.96) < wilson_lower_bound(5, 10)


@pytest.mark.parametrize(("k", "n"), [(-1, 5), (6, 5), (1, -1)])
def test_out_of_range_counts_raise(k: int, n: int) -> None:
    """k outside [0, n] is a broken invariant, not a silent value."""
    with pytest.raises(CoreInvariantError):
        wilson_lower_bound(k, n)
