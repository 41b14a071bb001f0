"""Unit tests of the stratified training batches (paper §3)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from stratune_core.evaluation.batches import make_batches
from stratune_core.records.base import Sample
from stratune_core.records.errors import ConfigError, CoreInvariantError


def _samples(spec: dict[str, int]) -> list[Sample]:
    return [Sample(id=f"{k}-{i}", stratum=k) for k, n in spec.items() for i in range(n)]


def test_sixteen_batches_partition_with_same_mix() -> None:
    """48 samples (32 of a, 16 of b) give 16 batches of 2 a + 1 b."""
    batches = make_batches(_samples({"a": 32, "b": 16}), 16, np.random.default_rng(0))
    assert len(batches) == 16
    assert sorted(x for b in batches for x in b) == sorted(s.id for s in _samples({"a": 32, "b": 16}))
    for b in batches:
        assert Counter(x.split("-")[0] for x in b) == {"a": 2, "b": 1}


def test_uneven_strata_differ_by_at_most_one() -> None:
    """5 samples of a stratum over 4 batches: one batch gets 2, the others 1."""
    batches = make_batches(_samples({"a": 5, "b": 3}), 4, np.random.default_rng(1))
    a_counts = sorted(sum(x.startswith("a") for x in b) for b in batches)
    b_counts = sorted(sum(x.startswith("b") for x in b) for b in batches)
    assert a_counts == [1, 1, 1, 2]
    assert b_counts == [0, 1, 1, 1]


def test_fewer_samples_than_batches() -> None:
    """3 samples and 16 batches give 3 one-sample batches, never an empty one."""
    batches = make_batches(_samples({"a": 3}), 16, np.random.default_rng(2))
    assert len(batches) == 3 and all(len(b) == 1 for b in batches)
    assert make_batches([], 16, np.random.default_rng(2)) == ()


def test_deterministic_given_seed() -> None:
    """Same seed, same batches; another seed reorders them."""
    s = _samples({"a": 40, "b": 24})
    assert make_batches(s, 16, np.random.default_rng(3)) == make_batches(s, 16, np.random.default_rng(3))
    assert make_batches(s, 16, np.random.default_rng(3)) != make_batches(s, 16, np.random.default_rng(4))


def test_duplicate_ids_and_bad_count_raise() -> None:
    """Duplicate training ids and a non-positive batch count are refused."""
    with pytest.raises(CoreInvariantError):
        make_batches(_samples({"a": 2}) * 2, 4, np.random.default_rng(0))
    with pytest.raises(ConfigError):
        make_batches(_samples({"a": 2}), 0, np.random.default_rng(0))
