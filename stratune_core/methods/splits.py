"""Seeded splits and orders of the training ids, the same for a run, its resume and its replay."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

import numpy as np

from stratune_core.state.state import round_rng

SPLIT_STREAM = 7  # rng streams of the baselines, apart from StraTune's per-round streams
ORDER_STREAM = 8

T = TypeVar("T")


def split_fit_validation(ids: Sequence[str], validation_frac: float,
                         seed: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A seeded (1 - f) / f split; each side keeps at least one id when there are two."""
    order = [ids[i] for i in round_rng(seed, -1, SPLIT_STREAM).permutation(len(ids))]
    n_val = min(max(1, round(validation_frac * len(order))), len(order) - 1) if len(order) > 1 else 0
    return tuple(order[n_val:]), tuple(order[:n_val])


def epoch_order(ids: Sequence[str], seed: int, epoch: int) -> tuple[str, ...]:
    """The fit ids in a fresh seeded order for each epoch."""
    rng = round_rng(seed, epoch, ORDER_STREAM)
    return tuple(ids[i] for i in rng.permutation(len(ids)))


def chunks(ids: Sequence[str], size: int) -> tuple[tuple[str, ...], ...]:
    """Consecutive groups of `size` (the last may be shorter)."""
    return tuple(tuple(ids[i:i + size]) for i in range(0, len(ids), size))


def balanced_chunks(items: Sequence[T], size: int) -> tuple[tuple[T, ...], ...]:
    """Groups of `size`; a remainder under half a group is dealt one by one over the first
    groups instead of forming a small group of its own (Trace2Skill's merge batches)."""
    if len(items) <= size:
        return (tuple(items),) if items else ()
    full, rest = divmod(len(items), size)
    groups = [list(items[i * size:(i + 1) * size]) for i in range(full)]
    tail = list(items[full * size:])
    if rest and rest < size / 2:
        for i, item in enumerate(tail):
            groups[i % full].append(item)
    elif rest:
        groups.append(tail)
    return tuple(tuple(g) for g in groups)


def seeded_order(items: Sequence[T], seed: int) -> tuple[T, ...]:
    """`items` shuffled by a seed of its own (Trace2Skill's consolidation seeds)."""
    rng = np.random.default_rng(seed)
    return tuple(items[i] for i in rng.permutation(len(items)))


def steps_in(n_fit: int, batch: int) -> int:
    return max(1, math.ceil(n_fit / max(1, batch)))
