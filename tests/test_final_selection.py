"""Unit tests of one final-selection comparison and the 60/40 split (paper App. B)."""

from __future__ import annotations

import pytest

from stratune_core.config.profiles import paper
from stratune_core.evaluation import final_compare, split_final_set
from stratune_core.records.enums import Reason, Stage
from stratune_core.records.errors import CoreInvariantError

CFG = paper()


@pytest.mark.parametrize(
    ("n", "n_sel"), [(0, 0), (1, 1), (2, 1), (3, 1), (10, 6), (11, 6), (100, 60)]
)
def test_split_sizes(n: int, n_sel: int) -> None:
    """The first max(1, int(0.6 n)) ids select and the rest confirm, in the given order."""
    ids = tuple(f"x{i}" for i in range(n))
    sel, conf = split_final_set(ids)
    assert len(sel) == n_sel
    assert sel + conf == ids


@pytest.mark.parametrize("frac", [0.0, 1.0, -0.1, 1.5])
def test_split_rejects_bad_fraction(frac: float) -> None:
    """The split fraction must leave both subsets possible."""
    with pytest.raises(CoreInvariantError):
        split_final_set(("a", "b"), frac)


def test_binary_candidate_replaces_on_both_subsets() -> None:
    """Selection (10): 2 net gains = 0.2 >= max(0.01, 1/10); confirmation (6): 1 net gain > 0."""
    sel_b, sel_c = [1] * 5 + [0] * 5, [1] * 7 + [0] * 3
    conf_b, conf_c = [1, 1, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0]
    s, c = final_compare(sel_b, sel_c, conf_b, conf_c, config=CFG, success_threshold=1.0)
    assert (s.stage, c.stage) == (Stage.FINAL_SELECTION, Stage.FINAL_CONFIRMATION)
    assert s.passed and c.passed
    assert s.threshold == pytest.approx(0.1)
    assert c.threshold == 0.0


def test_zero_gain_on_confirmation_fails() -> None:
    """The confirmation subset needs a strictly positive gain: one win and one loss is 0."""
    sel_b, sel_c = [1] * 5 + [0] * 5, [1] * 7 + [0] * 3
    conf_b, conf_c = [1, 0, 0, 0], [0, 1, 0, 0]
    s, c = final_compare(sel_b, sel_c, conf_b, conf_c, config=CFG, success_threshold=1.0)
    assert s.passed
    assert c.failed == (Reason.GAIN_BELOW_THRESHOLD,)


def test_selection_floor_is_final_gain_floor() -> None:
    """Continuous: m~/n = 0.02/100 is below the 0.01 floor, so the floor decides."""
    base = [0.5] * 100
    cand = [0.52] * 100  # gain 0.02
    s, _ = final_compare(base, cand, base[:10], cand[:10], config=CFG, success_threshold=0.9)
    assert s.threshold == 0.01 and s.passed
    s2, _ = final_compare(
        base, cand, base[:10], cand[:10],
        config=CFG.replace(final_gain_floor=0.05), success_threshold=0.9,
    )
    assert s2.failed == (Reason.GAIN_BELOW_THRESHOLD,)


def test_d_has_no_delta_term() -> None:
    """A solved sample that drops by delta but stays solved is no regression in final selection.

    4 samples solved at 1.0 drop to 0.9 (still solved, d = -0.1) and 6 unsolved rise by 0.2
    (U = 6). Screening's D would be 4; here D = 0.
    """
    base = [1.0] * 4 + [0.3] * 6
    cand = [0.9] * 4 + [0.5] * 6
    s, c = final_compare(base, cand, base, cand, config=CFG, success_threshold=0.9)
    assert s.stats.counts.D == 0 and s.stats.counts.U == 6
    assert s.passed and c.passed


def test_solved_to_failed_counts_and_blocks() -> None:
    """D counts solved->failed flips: 3 of 3 solved lost gives LB(3, 3) = 0.646 > 1/2."""
    base = [1.0] * 3 + [0.3] * 20
    cand = [0.5] * 3 + [0.45] * 20
    s, _ = final_compare(base, cand, base, cand, config=CFG, success_threshold=0.9)
    assert Reason.REGRESSIONS_AMONG_SOLVED in s.failed


def test_empty_subsets() -> None:
    """Empty subsets cannot pass."""
    s, c = final_compare([], [], [], [], config=CFG, success_threshold=1.0)
    assert s.failed == c.failed == (Reason.EMPTY_SET,)
