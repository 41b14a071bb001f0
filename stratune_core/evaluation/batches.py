"""The N_Q stratified training batches (paper §3; docs/design.md, "The round")."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from stratune_core.evaluation.sets import stratified_order
from stratune_core.records.base import Sample
from stratune_core.records.errors import ConfigError, CoreInvariantError


def make_batches(
    samples: Sequence[Sample], n_batches: int, rng: np.random.Generator
) -> tuple[tuple[str, ...], ...]:
    """Partition the sample ids into `n_batches` batches with the same stratum mix.

    Ids are grouped by stratum (sorted keys), shuffled within a stratum by `rng`, laid out one
    stratum after another and dealt round-robin with one global cursor. Each stratum thus
    occupies a contiguous run of the dealing order, so every batch gets floor or ceil of
    (stratum size / n_batches) of it. With fewer samples than batches, one batch per sample
    (never an empty batch).
    """
    if n_batches < 1:
        raise ConfigError(f"n_batches: must be >= 1, got {n_batches}")
    ids = [s.id for s in samples]
    if len(set(ids)) != len(ids):
        raise CoreInvariantError("make_batches: training sample ids are not unique")
    groups: dict[str, list[Sample]] = {}
    for s in samples:
        groups.setdefault(s.stratum, []).append(s)
    # stratum after stratum (not interleaved): contiguity is what bounds each batch's mix
    order = [sid for key in sorted(groups) for sid in stratified_order(rng, groups[key])]
    n = min(n_batches, len(order))
    return tuple(tuple(order[b::n]) for b in range(n))
