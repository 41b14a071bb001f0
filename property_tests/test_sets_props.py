"""Properties of screening and validation sets (paper App. B)."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from property_tests.strategies import sample_lists, seeds
from stratune_core.evaluation.sets import screening_parts, screening_set, validation_set
from stratune_core.records.base import Sample


@st.composite
def set_inputs(draw: st.DrawFn):
    samples = draw(sample_lists(max_size=80))
    ids = [s.id for s in samples]
    solved = draw(st.sets(st.sampled_from(ids))) if ids else set()
    exclude = draw(st.sets(st.sampled_from(ids))) if ids else set()
    return samples, solved, exclude, draw(st.integers(0, 30)), draw(st.integers(0, 30))


def _balanced(part: tuple[str, ...], pool: list[Sample]) -> bool:
    """Round-robin: a stratum can trail another by more than one only if it is exhausted."""
    stratum = {s.id: s.stratum for s in pool}
    have = Counter(s.stratum for s in pool)
    got = Counter(stratum[i] for i in part)
    return all(got[a] <= got[b] + 1 or got[b] == have[b] for a in have for b in have)


@given(set_inputs(), seeds, st.integers(0, 60))
def test_sets_are_disjoint_from_exclusions_and_each_other(inp, seed: int, v_size: int) -> None:
    """Q_s avoids the exclusions; Q_v built with Q_s excluded avoids both; no duplicates."""
    samples, solved, exclude, n_solved, n_random = inp
    rng = np.random.default_rng(seed)
    q_s = screening_set(
        rng, samples=samples, solved=solved, exclude=exclude, n_solved=n_solved, n_random=n_random
    )
    q_v = validation_set(rng, samples=samples, exclude=exclude | set(q_s), size=v_size)
    assert len(set(q_s)) == len(q_s) and len(set(q_v)) == len(q_v)
    assert not set(q_s) & exclude and not set(q_v) & exclude
    assert not set(q_s) & set(q_v)
    eligible = {s.id for s in samples} - exclude
    assert len(q_v) == min(v_size, len(eligible - set(q_s)))


@given(set_inputs(), seeds)
def test_screening_quotas_and_stratification(inp, seed: int) -> None:
    """Solved part: min(its share of the room, eligible solved) solved ids, the share being
    the quota, or the room split in the quotas' ratio when both do not fit; random part: the
    random quota plus the solved part's shortfall, or all the rest (Q_s keeps its full size);
    each part is balanced over strata."""
    samples, solved, exclude, n_solved, n_random = inp
    head, tail = screening_parts(
        np.random.default_rng(seed),
        samples=samples,
        solved=solved,
        exclude=exclude,
        n_solved=n_solved,
        n_random=n_random,
    )
    q = head + tail
    eligible = [s for s in samples if s.id not in exclude]
    solved_pool = [s for s in eligible if s.id in solved]
    room = max(1, len(eligible))
    share = n_solved if n_solved + n_random <= room else room * n_solved // (n_solved + n_random)
    assert len(head) == min(share, len(solved_pool))
    k = len(head)
    assert set(head) <= solved
    rest = [s for s in eligible if s.id not in set(head)]
    assert len(tail) == min(n_random + (n_solved - k), len(rest))
    assert len(q) == min(n_solved + n_random, len(eligible))
    assert _balanced(head, solved_pool) and _balanced(tail, rest)


@given(set_inputs(), seeds)
def test_deterministic_given_seed(inp, seed: int) -> None:
    """The same rng seed gives the same sets."""
    samples, solved, exclude, n_solved, n_random = inp
    kw = dict(samples=samples, solved=solved, exclude=exclude, n_solved=n_solved, n_random=n_random)
    assert screening_set(np.random.default_rng(seed), **kw) == screening_set(
        np.random.default_rng(seed), **kw
    )
