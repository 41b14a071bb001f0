"""Unit tests of screening-set and validation-set construction (paper App. B)."""

from __future__ import annotations

import numpy as np

from stratune_core.evaluation.sets import (
    ranking_set,
    screening_parts,
    screening_set,
    stratified_order,
    validation_set,
)
from stratune_core.records.base import Sample


def _samples(spec: dict[str, int]) -> list[Sample]:
    return [Sample(id=f"{k}{i}", stratum=k) for k, n in spec.items() for i in range(n)]


def test_stratified_order_round_robins_sorted_strata() -> None:
    """Strata are visited in sorted key order, one id each per pass, longer strata last."""
    order = stratified_order(np.random.default_rng(0), _samples({"b": 2, "a": 3, "c": 1}))
    assert [s[0] for s in order] == ["a", "b", "c", "a", "b", "a"]
    assert sorted(order) == ["a0", "a1", "a2", "b0", "b1", "c0"]


def test_screening_quotas_and_order() -> None:
    """Solved part first (only solved ids), then random ids not in it; quotas respected."""
    samples = _samples({"a": 30, "b": 30})
    solved = {s.id for s in samples[::2]}
    q = screening_set(
        np.random.default_rng(1), samples=samples, solved=solved, exclude=set(),
        n_solved=18, n_random=18,
    )
    assert len(q) == 36 and len(set(q)) == 36
    assert set(q[:18]) <= solved
    # stratified: 9 of each stratum in each part
    assert sum(x.startswith("a") for x in q[:18]) == 9
    assert sum(x.startswith("a") for x in q[18:]) == 9


def test_screening_excludes_and_tops_up_with_random_samples() -> None:
    """Excluded ids never appear; with few eligible solved ids the random part takes the
    shortfall, so Q_s has every one of the 8 eligible ids (quota 18 + 3)."""
    samples = _samples({"a": 10})
    q = screening_set(
        np.random.default_rng(2), samples=samples, solved={"a0", "a1", "a2"},
        exclude={"a1", "a5"}, n_solved=18, n_random=3,
    )
    assert set(q[:2]) == {"a0", "a2"}
    assert len(q) == 8
    assert not {"a1", "a5"} & set(q)


def test_round_zero_screening_set_has_full_size() -> None:
    """With no solved sample known (round 0), Q_s is 36 random samples, not 18."""
    samples = _samples({"a": 30, "b": 30})
    q = screening_set(
        np.random.default_rng(4), samples=samples, solved=set(), exclude=set(),
        n_solved=18, n_random=18,
    )
    assert len(q) == 36 and len(set(q)) == 36
    assert sum(x.startswith("a") for x in q) == 18  # still stratified
    few = screening_set(
        np.random.default_rng(4), samples=samples, solved={"a0", "b0", "a1"}, exclude=set(),
        n_solved=18, n_random=18,
    )
    assert len(few) == 36 and set(few[:3]) == {"a0", "b0", "a1"}


def test_screening_is_deterministic_given_rng_state() -> None:
    """Same seed, same set; another seed, another random part."""
    samples = _samples({"a": 40, "b": 40})
    kw = dict(samples=samples, solved=set(), exclude=set(), n_solved=0, n_random=18)
    a = screening_set(np.random.default_rng(7), **kw)
    b = screening_set(np.random.default_rng(7), **kw)
    c = screening_set(np.random.default_rng(8), **kw)
    assert a == b and a != c


def test_validation_set_size_and_exclusion() -> None:
    """A uniform sample of the requested size from eligible ids; all of them if fewer."""
    samples = _samples({"a": 20, "b": 5})
    excl = {"a0", "b0"}
    v = validation_set(np.random.default_rng(3), samples=samples, exclude=excl, size=10)
    assert len(v) == 10 and len(set(v)) == 10 and not excl & set(v)
    everything = validation_set(np.random.default_rng(3), samples=samples, exclude=excl, size=99)
    assert sorted(everything) == sorted(s.id for s in samples if s.id not in excl)


def test_duplicate_sample_ids_count_once() -> None:
    """A sample listed twice can be drawn only once."""
    samples = _samples({"a": 3}) * 2
    v = validation_set(np.random.default_rng(4), samples=samples, exclude=set(), size=10)
    assert sorted(v) == ["a0", "a1", "a2"]


def test_ranking_set_matches_validation_set() -> None:
    """The ranking subset is drawn like a validation set."""
    samples = _samples({"a": 50})
    r = ranking_set(np.random.default_rng(5), samples=samples, exclude=set(), size=32)
    v = validation_set(np.random.default_rng(5), samples=samples, exclude=set(), size=32)
    assert r == v


def test_screening_leaves_room_for_the_validation_set():
    """On a training set too small for both at full size (48: a batch, Q_s of 36, Q_v of 14),
    Q_s leaves `keep` eligible samples for Q_v, the room of 31 split in the quotas' ratio
    (15 solved, 16 others, so failures are screened too); it keeps at least one."""
    samples = _samples({"a": 24, "b": 21})  # 45 eligible (a batch of 3 is elsewhere)
    solved = {s.id for s in samples[:20]}
    solved_part, random_part = screening_parts(
        np.random.default_rng(5), samples=samples, solved=solved, exclude=set(), n_solved=18,
        n_random=18, keep=14)
    assert (len(solved_part), len(random_part)) == (15, 16) and set(solved_part) <= solved
    assert len(set(random_part) - solved) >= 16 - 5  # every unsolved sample could be drawn
    q = solved_part + random_part
    assert q == screening_set(np.random.default_rng(5), samples=samples, solved=solved,
                              exclude=set(), n_solved=18, n_random=18, keep=14)
    v = validation_set(np.random.default_rng(5), samples=samples, exclude=set(q), size=14)
    assert len(v) == 14
    assert len(screening_set(np.random.default_rng(5), samples=samples[:10], solved=set(),
                             exclude=set(), n_solved=18, n_random=18, keep=14)) == 1


def test_released_screening_keeps_its_quota_and_does_not_top_up():
    """The released code's Q_s on a small set: at most 18 solved + 18 random, nothing kept
    back for Q_v (validation takes what is left) and no random top-up for missing solved ids."""
    samples = _samples({"a": 24, "b": 21})
    solved = {s.id for s in samples[:5]}
    q = screening_set(np.random.default_rng(5), samples=samples, solved=solved, exclude=set(),
                      n_solved=18, n_random=18, top_up=False)
    assert len(q) == 5 + 18 and set(q[:5]) == solved and not solved & set(q[5:])
    v = validation_set(np.random.default_rng(5), samples=samples, exclude=set(q), size=100)
    assert len(v) == 45 - 23
    full = screening_set(np.random.default_rng(5), samples=samples, solved=set(samples[i].id
                         for i in range(30)), exclude=set(), n_solved=18, n_random=18, top_up=False)
    assert len(full) == 36
