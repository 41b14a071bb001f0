"""The released code's early stops inside one evaluation stage (docs/design.md, "Released
profile"): the smoke check and the stage-1 futility stop of screening, and validation's
futility stop. Each saves the executions of a candidate that already lost on a first part.
Pure rules over scores; `stratune_core/round/stages.py` runs them."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import zip_longest

from attrs import frozen

from stratune_core.evaluation.paired import DIFF_TOL, PairedStats, screening_gain_threshold


@frozen(kw_only=True)
class Smoke:
    """Among the smoke samples the reference solves: `broken` the candidate fails, `kept` it
    solves."""

    broken: int
    kept: int
    failed: bool


def smoke_check(base_solved: Sequence[bool], cand_solved: Sequence[bool], *, broken: int) -> Smoke:
    """The candidate broke at least `broken` samples the reference solves and kept none."""
    pairs = [(b, c) for b, c in zip(base_solved, cand_solved, strict=True) if b]
    lost = sum(not c for _, c in pairs)
    kept = len(pairs) - lost
    return Smoke(broken=lost, kept=kept, failed=lost >= broken and kept == 0)


def interleave(first: Sequence[str], second: Sequence[str]) -> tuple[str, ...]:
    """a0, b0, a1, b1, ...: stage 1 then sees both the solved and the random part of Q_s."""
    return tuple(x for pair in zip_longest(first, second) for x in pair if x is not None)


def stage_one_size(n: int, minimum: int) -> int:
    """Stage 1 is max(minimum, n // 2) samples; n or more means no staging."""
    return max(minimum, n // 2)


def screening_futile(stats: PairedStats, *, eps0: float, losses: int) -> bool:
    """Stage 1 of screening: losses - wins >= `losses` and gain <= -eps_s (eps_s on stage 1)."""
    eps = screening_gain_threshold(stats, eps0)
    return stats.n > 0 and stats.losses - stats.wins >= losses and stats.gain <= -eps + DIFF_TOL


def validation_futile(stats: PairedStats) -> bool:
    """Stage 1 of validation: a negative gain."""
    return stats.n > 0 and stats.gain < -DIFF_TOL
