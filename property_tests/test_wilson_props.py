"""Properties of the Wilson lower bound (paper App. B)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from stratune_core.evaluation import wilson_lower_bound

Z = 1.2816


@st.composite
def k_n(draw: st.DrawFn, max_n: int = 100_000) -> tuple[int, int]:
    n = draw(st.integers(0, max_n))
    return draw(st.integers(0, n)), n


@given(k_n(), st.floats(0.5, 3.0))
def test_between_zero_and_p_hat(kn: tuple[int, int], z: float) -> None:
    """0 <= LB(k, n) <= k/n for every z."""
    k, n = kn
    lb = wilson_lower_bound(k, n, z)
    assert 0.0 <= lb <= (k / n if n else 0.0)


@given(k_n(max_n=10_000))
def test_strictly_increasing_in_k(kn: tuple[int, int]) -> None:
    """One more loss at the same n raises the bound."""
    k, n = kn
    if k < n:
        assert wilson_lower_bound(k, n) < wilson_lower_bound(k + 1, n)


@given(st.integers(1, 200), st.data())
def test_converges_to_p_hat(n: int, data: st.DataObject) -> None:
    """With p = k/n fixed and N = m n, p - LB <= z sqrt(p(1-p)/N) + z^2/N, which goes to 0."""
    k = data.draw(st.integers(0, n))
    p = k / n
    gaps = []
    for m in (1, 10, 100, 10_000, 1_000_000):
        big_n = m * n
        gap = p - wilson_lower_bound(m * k, big_n)
        assert gap <= Z * math.sqrt(p * (1 - p) / big_n) + Z * Z / big_n + 1e-12
        gaps.append(gap)
    assert gaps == sorted(gaps, reverse=True)
    assert gaps[-1] < 2e-3


@given(st.integers(0, 10**7))
def test_zero_losses_and_empty(n: int) -> None:
    """LB(0, n) = 0 for every n, including n = 0."""
    assert wilson_lower_bound(0, n) == 0.0
