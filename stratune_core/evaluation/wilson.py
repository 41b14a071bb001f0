"""The one-sided Wilson lower confidence bound used by every regression check (paper Eq. 4)."""

from __future__ import annotations

import math

from stratune_core.records.errors import CoreInvariantError

Z_90 = 1.2816  # 90% quantile of the standard normal: a one-sided 90% bound


def wilson_lower_bound(k: int, n: int, z: float = Z_90) -> float:
    """LB(k, n): a lower bound on the true loss proportion when k of n samples are losses.

    LB(k, 0) = 0 (a check with no eligible samples passes) and LB(0, n) = 0.
    """
    if n < 0 or k < 0 or k > n:
        raise CoreInvariantError(f"wilson_lower_bound: need 0 <= k <= n, got k={k}, n={n}")
    if n == 0 or k == 0:
        # k = 0 is exactly 0 in exact arithmetic; computing it in floats leaves +-1e-17 residue
        return 0.0
    p = k / n
    z2 = z * z
    centre = p + z2 / (2 * n)
    margin = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    bound = (centre - margin) / (1 + z2 / n)
    # the bound lies strictly inside [0, p] in exact arithmetic; clamp away float residue
    return min(p, max(0.0, bound))
