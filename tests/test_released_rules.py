"""The released profile's evaluation rules as pure functions: the smoke check,
the futility stops, the branch rule, probation's decision, the save rule, the final-selection
floor. Each rule has a case where it fires and one where it does not (or is switched off)."""

from __future__ import annotations

import pytest

from stratune_core.config.knobs import Config
from stratune_core.config.profiles import paper, released
from stratune_core.evaluation import paired_stats, screen
from stratune_core.evaluation.branch import branch_check, branch_of
from stratune_core.evaluation.final_selection import final_compare, final_floor
from stratune_core.evaluation.futility import (
    interleave,
    screening_futile,
    smoke_check,
    stage_one_size,
    validation_futile,
)
from stratune_core.evaluation.probation import Call, screening_call

RELEASED = released()


def _screen(base, cand, config: Config = RELEASED, threshold: float = 1.0):
    return screen(base, cand, config=config, eps0=0.0025, success_threshold=threshold)


def test_smoke_check_fails_a_candidate_that_breaks_solved_samples_and_keeps_none():
    broke = smoke_check([True] * 8, [False] * 8, broken=6)
    assert broke.failed and (broke.broken, broke.kept) == (8, 0)
    kept_one = smoke_check([True] * 8, [False] * 7 + [True], broken=6)
    assert not kept_one.failed and (kept_one.broken, kept_one.kept) == (7, 1)
    too_few = smoke_check([True] * 5 + [False] * 3, [False] * 8, broken=6)  # 5 broken of 5 solved
    assert not too_few.failed and too_few.broken == 5


def test_stage_one_interleaves_the_solved_and_random_parts():
    assert interleave(["s1", "s2", "s3"], ["r1"]) == ("s1", "r1", "s2", "s3")
    assert stage_one_size(36, 12) == 18 and stage_one_size(20, 12) == 12


def test_screening_futility_needs_net_losses_and_a_loss_beyond_eps():
    losing = paired_stats([1] * 12, [1] * 9 + [0] * 3, success_threshold=1.0)
    assert screening_futile(losing, eps0=0.0025, losses=2)
    one_net = paired_stats([1] * 12, [1] * 11 + [0], success_threshold=1.0)
    assert not screening_futile(one_net, eps0=0.0025, losses=2)  # only one net loss
    # continuous: many small losses, two net, but each far below eps_s = m~/n = 0.001
    tiny = paired_stats([0.5] * 12, [0.4999] * 2 + [0.5] * 10, success_threshold=0.9)
    assert not screening_futile(tiny, eps0=0.01, losses=2)


def test_validation_futility_is_a_negative_gain():
    assert validation_futile(paired_stats([1, 0, 1], [0, 0, 1], success_threshold=1.0))
    assert not validation_futile(paired_stats([1, 0, 1], [1, 0, 1], success_threshold=1.0))


def _branch_case(wins: int, losses: int, win_strata: tuple[str, ...]):
    """Losses among 18 solved samples (strata P and U), wins among 18 unsolved ones."""
    base = [1.0] * 18 + [0.0] * 18
    cand = [0.0] * losses + [1.0] * (18 - losses) + [1.0] * wins + [0.0] * (18 - wins)
    strata = ["P", "U"] * 9 + [win_strata[i % len(win_strata)] for i in range(18)]
    return base, cand, strata, [False] * 18 + [True] * 18


def test_branch_rule_saves_wins_and_losses_spread_over_strata():
    base, cand, strata, random = _branch_case(8, 9, ("R", "X"))
    out = _screen(base, cand)
    assert not out.passed  # a net loss: neither accepted nor, by the paper's rule, saved
    branch = branch_of(branch_check(base, cand, outcome=out, strata=strata, random_part=random,
                         config=released()), out)
    assert branch is not None and (branch.wins, branch.losses) == (8, 9)
    assert (branch.win_strata, branch.loss_strata) == (2, 2)
    assert screening_call(out, config=released(), branched=True, final=False) is Call.BRANCH


def test_branch_rule_needs_two_win_strata_few_random_losses_and_enough_of_each():
    base, cand, strata, random = _branch_case(8, 9, ("R",))
    out = _screen(base, cand)
    assert branch_of(branch_check(base, cand, outcome=out, strata=strata, random_part=random,
                       config=released()), out) is None  # all wins in one stratum
    base, cand, strata, _ = _branch_case(8, 9, ("R", "X"))
    guarded = [True] * 36  # every sample drawn at random: 9 losses among them
    assert branch_of(branch_check(base, cand, outcome=out, strata=strata, random_part=guarded,
                       config=released()), out) is None
    base, cand, strata, random = _branch_case(2, 3, ("R", "X"))
    out = _screen(base, cand)
    assert branch_of(branch_check(base, cand, outcome=out, strata=strata, random_part=random,
                       config=released()), out) is None  # 5 changes: not ready


def test_probation_screens_an_inconclusive_candidate_again():
    # 3 wins, no loss: passes the paper's gates with 3 changes, fewer than ready_changes = 6
    out = _screen([0] * 3 + [1] * 33, [1] * 36)
    assert out.passed
    assert screening_call(out, config=released(), branched=False, final=False) is Call.PROBATION
    # decided on both sets: still too few changes, but a positive gain is saved, not accepted
    assert screening_call(out, config=released(), branched=False, final=True) is Call.SAVE
    # the paper accepts it on one set
    assert screening_call(out, config=paper(), branched=False, final=True) is Call.PASS


def test_probation_rejects_a_clearly_worse_candidate_at_once():
    no_win = _screen([1] * 36, [0] * 3 + [1] * 33)  # W = 0, L = 3
    assert screening_call(no_win, config=released(), branched=False, final=False) is Call.REJECT
    net_losses = _screen([1] * 20 + [0] * 16, [0] * 6 + [1] * 14 + [1] * 3 + [0] * 13)  # W3 L6
    assert screening_call(net_losses, config=released(), branched=False,
                          final=False) is Call.REJECT
    ready = _screen([1] * 20 + [0] * 16, [1] * 20 + [1] * 8 + [0] * 8)  # W8 L0: ready, passes
    assert screening_call(ready, config=released(), branched=False, final=False) is Call.PASS


def test_saving_needs_wins_at_least_losses_in_the_released_profile():
    # continuous: 2 gains of 0.1 and 3 losses of 0.05 (still solved): the regression checks
    # pass and 0 < gain = 0.05 / 36 < eps_s = 0.0025
    base = [0.5] * 2 + [1.0] * 3 + [1.0] * 31
    cand = [0.6] * 2 + [0.95] * 3 + [1.0] * 31
    kept = _screen(base, cand, paper(), threshold=0.9)
    assert kept.saveable and kept.stats.wins < kept.stats.losses
    assert not _screen(base, cand, paper().replace(save_needs_wins=True), threshold=0.9).saveable


def test_the_final_floor_is_max_of_0_01_and_two_samples_of_the_training_set():
    assert final_floor(paper(), 150) == 0.01
    assert final_floor(released(), 150) == pytest.approx(2 / 150)
    assert final_floor(released(), 400) == 0.01
    # a gain of 0.0125 (5 of 200 samples up by 0.5) meets the paper's floor, not the released
    # one for 150 training samples (0.0133)
    sel_b, sel_c = [0.5] * 200, [1.0] * 5 + [0.5] * 195
    conf_b, conf_c = [0.5] * 10, [1.0] + [0.5] * 9
    for config, passed in ((paper(), True), (released(), False)):
        s, c = final_compare(sel_b, sel_c, conf_b, conf_c, config=config, success_threshold=0.9,
                             n_train=150)
        assert s.passed is passed and c.passed, config
