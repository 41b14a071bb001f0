"""SkillOpt over the toy world: batches of 40 split into analyst minibatches of 8, the edit
budget decaying 4 -> 2 on a cosine, a strict gate on the selection split, slow updates and
meta guidance from the second epoch on."""

from __future__ import annotations

import stratune_core.state.events as ev
from llm_cache.records import CallKind
from stratune_core.config.knobs import Config
from stratune_core.methods.skillopt_edits import edit_limit, proposals, top
from stratune_core.methods.skillopt_prompts import ANALYST_SYSTEM, GUIDANCE_TAG
from stratune_core.records.enums import StopReason
from stratune_core.records.method_spec import SkillOptMethod
from stratune_core.records.purposes import MethodPurpose, UpdateVerdict
from tests.support.toy import ToyTask
from tests.support.toy_methods import run_method, unattributed


def _of(events, cls):
    return [e for e in events if isinstance(e, cls)]


def test_the_edit_budget_decays_from_four_to_two_on_a_cosine():
    limits = [edit_limit(4, 2, t, 9) for t in range(9)]
    assert limits[0] == 4 and limits[-1] == 2
    assert limits == sorted(limits, reverse=True) and 3 in limits
    assert edit_limit(4, 2, 0, 1) == 4


def test_proposals_are_read_ranked_and_clipped():
    reply = ('<proposal score="0.3"><edit op="append"><new>a</new></edit></proposal>'
             '<proposal score="0.9"><edit op="append"><new>b</new></edit></proposal>'
             '<proposal score="x">junk</proposal>'
             '<proposal score="0.5"><edit op="append"><new>c</new></edit></proposal>')
    found = proposals(reply)
    assert [p.edit.new for p in found] == ["a", "b", "c"]
    assert [p.edit.new for p in top(found, 2)] == ["b", "c"]


def test_batches_minibatches_and_the_gate():
    events, _, llm = run_method(SkillOptMethod(), Config(seed=1), ToyTask(n_train=96))
    split = _of(events, ev.SplitMade)[0]
    assert len(split.validation_ids) == 32 and len(split.fit_ids) == 64
    rollouts = [e for e in _of(events, ev.TargetExecuted) if e.purpose is MethodPurpose.ROLLOUT]
    assert all(len(e.sample_ids) + e.reused <= 40 for e in rollouts)
    analysts = [r for r in llm.calls if r.system == ANALYST_SYSTEM]
    assert all(r.messages[0].text().count("<execution>") <= 8 for r in analysts)
    for d in _of(events, ev.UpdateDecided):
        if d.verdict is UpdateVerdict.KEPT:
            assert d.score > d.reference_score  # strictly better
        if d.verdict is UpdateVerdict.REVERTED:
            assert d.score <= d.reference_score
    selected = _of(events, ev.EditsSelected)
    assert all(e.applied <= e.limit for e in selected)
    assert [e.limit for e in selected] == sorted((e.limit for e in selected), reverse=True)
    assert unattributed(events, 6 * 96) is None
    assert events[-1].reason is StopReason.COMPLETED


def test_slow_update_and_meta_guidance_from_the_second_epoch():
    events, _, llm = run_method(SkillOptMethod(), Config(seed=0), ToyTask(n_train=96))
    reviewed = _of(events, ev.EpochReviewed)
    assert reviewed and all(r.epoch >= 1 for r in reviewed)
    r = reviewed[0]
    assert r.improved + r.regressed + r.persistent_fail + r.stable_success == 20
    assert any(d.detail == "slow update" for d in _of(events, ev.UpdateDecided))
    later = [c for c in llm.calls if c.kind is CallKind.REFLECTION and c.system == ANALYST_SYSTEM
             and f"<{GUIDANCE_TAG}>" in c.messages[0].text()]
    assert later  # the guidance reaches the analysts of the next epoch


def test_a_small_budget_stops_before_a_step_it_cannot_gate():
    events, _, _ = run_method(SkillOptMethod(), Config(seed=2, budget=120), ToyTask(n_train=96))
    assert events[-1].reason is StopReason.BUDGET
    assert unattributed(events, 120) is None
