"""Properties of the released screening-set bookkeeping (`screen_usage.py`): the solved quota
min(18, max(6, known // 3)), the usage caps (a sample serves at most 6 times in solved parts
and 3 times in random parts), readiness at 70 % of each quota."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from property_tests.strategies import sample_lists, seeds
from stratune_core.evaluation.screen_usage import ScreenUsage, part_ready, solved_quota
from stratune_core.evaluation.sets import screening_parts
from stratune_core.round.ranking_smoke import smoke_threshold


@given(st.integers(0, 60), st.integers(0, 20), st.integers(0, 2000))
def test_solved_quota_formula(quota: int, floor: int, known: int) -> None:
    got = solved_quota(quota, floor, known)
    assert got == min(quota, max(floor, known // 3))
    assert got <= quota and (got >= floor or got == quota)
    assert solved_quota(quota, floor, known + 3) >= got  # more known, never a smaller quota
    assert solved_quota(quota, None, known) == quota


def test_solved_quota_released_values() -> None:
    assert [solved_quota(18, 6, k) for k in (0, 17, 18, 21, 53, 54, 500)] == [6, 6, 6, 7, 17, 18, 18]


@given(st.integers(0, 40), st.integers(0, 40), st.floats(0.0, 1.0))
def test_readiness_is_a_share_of_the_quota(drawn: int, quota: int, share: float) -> None:
    ready = part_ready(drawn, quota, share)
    assert ready == (drawn >= math.ceil(share * quota - 1e-9))
    if ready:
        assert part_ready(drawn + 1, quota, share)
    assert part_ready(0, 0, share)
    assert part_ready(13, 18, 0.7) and not part_ready(12, 18, 0.7)
    assert part_ready(5, 6, 0.7) and not part_ready(4, 6, 0.7)


@st.composite
def worn_runs(draw: st.DrawFn):
    samples = draw(sample_lists(min_size=1, max_size=60))
    ids = [s.id for s in samples]
    solved = draw(st.sets(st.sampled_from(ids)))
    return samples, solved, draw(st.integers(1, 8)), draw(st.integers(1, 6)), draw(st.integers(1, 6))


@given(worn_runs(), seeds)
def test_usage_caps_hold_over_many_sets(run, seed: int) -> None:
    """However many sets are drawn, no sample serves in more than `cap` solved (random) parts,
    and a sample under its cap stays eligible."""
    samples, solved, sets, solved_cap, random_cap = run
    usage = ScreenUsage()
    rng = np.random.default_rng(seed)
    for _ in range(sets):
        worn_s = ScreenUsage.worn(usage.solved, solved_cap)
        worn_r = ScreenUsage.worn(usage.random, random_cap)
        solved_part, random_part = screening_parts(
            rng, samples=samples, solved=solved, exclude=set(), n_solved=4, n_random=5,
            top_up=False, worn_solved=worn_s, worn_random=worn_r)
        assert not worn_s & set(solved_part) and not worn_r & set(random_part)
        assert set(solved_part) <= solved and len(solved_part) <= 4 and len(random_part) <= 5
        usage = usage.add(solved_part, random_part)
    assert all(n <= solved_cap for n in usage.solved.values())
    assert all(n <= random_cap for n in usage.random.values())


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_ranking_smoke_threshold(reference: float, share: float, draft: float) -> None:
    """A draft is killed iff the reference scores above 0.05 and the draft under share x it."""
    threshold = smoke_threshold(reference, share)
    if reference <= 0.05:
        assert threshold is None
    else:
        assert threshold == share * reference
        killed = draft < threshold
        assert killed == (draft < share * reference)
        assert threshold <= reference
