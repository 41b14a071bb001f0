"""Screening-set and validation-set construction (paper App. B).

All randomness comes from the `rng` argument, so a set depends only on the rng state and the
inputs. Samples are identified by id; a sample listed twice counts once (first occurrence).
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from itertools import zip_longest
from typing import Any

import numpy as np

from stratune_core.records.base import Sample


def _eligible(samples: Sequence[Sample], exclude: Set[str]) -> list[Sample]:
    seen: set[str] = set()
    out: list[Sample] = []
    for s in samples:
        if s.id in exclude or s.id in seen:
            continue
        seen.add(s.id)
        out.append(s)
    return out


def stratified_order(rng: np.random.Generator, samples: Sequence[Sample]) -> list[str]:
    """Round-robin over strata in sorted key order; within a stratum in rng order.

    One permutation is drawn per stratum, in sorted stratum order, so the rng consumption is
    fixed by the strata sizes.
    """
    groups: dict[str, list[str]] = {}
    for s in samples:
        groups.setdefault(s.stratum, []).append(s.id)
    shuffled = [
        [groups[key][i] for i in rng.permutation(len(groups[key]))] for key in sorted(groups)
    ]
    return [sid for row in zip_longest(*shuffled) for sid in row if sid is not None]


def screening_set(rng: np.random.Generator, **parts: Any) -> tuple[str, ...]:
    """Q_s in one tuple, the solved part first (`screening_parts` takes the same arguments)."""
    solved_part, random_part = screening_parts(rng, **parts)
    return solved_part + random_part


def screening_parts(
    rng: np.random.Generator,
    *,
    samples: Sequence[Sample],
    solved: Set[str],
    exclude: Set[str],
    n_solved: int,
    n_random: int,
    keep: int = 0,
    top_up: bool = True,
    worn_solved: Set[str] = frozenset(),
    worn_random: Set[str] = frozenset(),
    split_room: bool = True,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Q_s: up to `n_solved` ids the reference skill solved, then random ids of the rest.

    The random part takes `n_random` ids plus whatever the solved part fell short of its
    quota, so Q_s keeps its full size (n_solved + n_random, or every eligible id if fewer) while
    few solved samples are known: in round 0 none is, and a set of n_random samples would make
    eps_s = max(eps0, m~/|Q_s|) needlessly large (the paper screens on 36 to 48 samples).
    `keep` eligible ids are left out of Q_s for the validation set that must be disjoint from
    it (Q_s still gets at least one): on a training set too small for both sets at full size,
    validation keeps its size and screening takes the rest. With `top_up` False (the released
    code) the random part takes `n_random` ids only, whatever the solved part fell short of.
    When the room is smaller than both quotas together, `split_room` splits it in their ratio
    (`_solved_share`); without it (the released code) the solved part is filled first.
    Both parts are stratified (`stratified_order`). Excluded ids (the round's batch, samples
    used to generate the candidate) never appear; the result has no duplicates. Order: the
    solved part, then the random part. `worn_solved` / `worn_random` ids may not serve in that
    part (the released code's usage caps).
    """
    eligible = _eligible(samples, exclude)
    room = max(1, len(eligible) - max(0, keep))
    wanted = _solved_share(room, max(0, n_solved), max(0, n_random)) if split_room else min(
        max(0, n_solved), room)
    solved_part = stratified_order(
        rng, [s for s in eligible if s.id in solved and s.id not in worn_solved])[:wanted]
    taken = set(solved_part)
    rest = [s for s in eligible if s.id not in taken and s.id not in worn_random]
    shortfall = max(0, n_solved) - len(solved_part) if top_up else 0
    size = min(max(0, n_random) + shortfall, room - len(solved_part))
    random_part = stratified_order(rng, rest)[:size]
    return tuple(solved_part), tuple(random_part)


def _solved_share(room: int, n_solved: int, n_random: int) -> int:
    """The solved part's share of a Q_s that has less room than both quotas: the room split in
    the quotas' ratio (the random part gets the rounding). Filling the room with solved samples
    first leaves a small training set no failing sample to screen on, so no candidate that
    fixes a failure can show a gain there; the random part still takes what the solved part
    falls short of."""
    if n_solved + n_random <= room:
        return n_solved
    return min(n_solved, room * n_solved // (n_solved + n_random))


def validation_set(
    rng: np.random.Generator, *, samples: Sequence[Sample], exclude: Set[str], size: int
) -> tuple[str, ...]:
    """Q_v: a uniform random sample of `size` eligible ids (all of them if fewer), in rng order."""
    eligible = _eligible(samples, exclude)
    order = rng.permutation(len(eligible))[: max(0, size)]
    return tuple(eligible[i].id for i in order)


def ranking_set(
    rng: np.random.Generator, *, samples: Sequence[Sample], exclude: Set[str], size: int
) -> tuple[str, ...]:
    """The I2/I3 ranking subset: drawn exactly like a validation set."""
    return validation_set(rng, samples=samples, exclude=exclude, size=size)
