"""Properties of the stratified batches (paper §3)."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from property_tests.strategies import sample_lists, seeds
from stratune_core.evaluation.batches import make_batches
from stratune_core.methods.splits import balanced_chunks


@given(sample_lists(max_size=120), st.integers(1, 20), seeds)
def test_batches_partition_and_keep_the_mix(samples, n_batches: int, seed: int) -> None:
    """Batches partition the ids, none is empty, and for every stratum s and batch b,
    |count of s in b - count of s / number of batches| < 1."""
    batches = make_batches(samples, n_batches, np.random.default_rng(seed))
    n_eff = min(n_batches, len(samples))
    assert len(batches) == n_eff and all(batches)
    flat = [x for b in batches for x in b]
    assert sorted(flat) == sorted(s.id for s in samples)
    stratum = {s.id: s.stratum for s in samples}
    total = Counter(s.stratum for s in samples)
    for b in batches:
        got = Counter(stratum[x] for x in b)
        for key, count in total.items():
            assert abs(got[key] - count / n_eff) < 1
    # batch sizes differ by at most one
    assert max(map(len, batches), default=0) - min(map(len, batches), default=0) <= 1


@given(sample_lists(max_size=60), st.integers(1, 20), seeds)
def test_batches_deterministic(samples, n_batches: int, seed: int) -> None:
    """Same samples, count and seed, same batches."""
    a = make_batches(samples, n_batches, np.random.default_rng(seed))
    assert a == make_batches(samples, n_batches, np.random.default_rng(seed))


@given(st.integers(0, 120), st.integers(1, 9))
def test_trace2skill_merge_batches_hold_every_record_once_in_balanced_groups(n: int,
                                                                             size: int) -> None:
    """Every record in exactly one group; beyond one group, no group under half `size` or at
    1.5 `size` or more, and a remainder of half a group or more is a group of its own."""
    groups = balanced_chunks(list(range(n)), size)
    assert sorted(x for g in groups for x in g) == list(range(n))
    if n <= size:
        assert len(groups) == (1 if n else 0)
        return
    full, rest = divmod(n, size)
    assert len(groups) == full + (1 if rest >= size / 2 else 0)
    assert all(size / 2 <= len(g) < 1.5 * size for g in groups)
