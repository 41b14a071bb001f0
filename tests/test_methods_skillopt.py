"""SkillOpt over the toy world: batches of 40 split into analyst minibatches of 8, the edit
budget decaying 4 -> 2 on a cosine, a strict gate on the selection split, slow updates and
meta guidance from the second epoch on."""

from __future__ import annotations

import attrs
from attrs import frozen

import stratune_core.state.events as ev
from llm_cache.records import Response, Usage
from stratune_core.config.knobs import Config
from stratune_core.methods.skillopt import SLOW_DETAIL
from stratune_core.methods.skillopt_edits import apply_selected, edit_limit, merge, proposals, top
from stratune_core.methods.skillopt_events import EditsSelected, EpochReviewed
from stratune_core.methods.skillopt_guidance import GUIDANCE_OPEN, guidance_of, with_guidance
from stratune_core.methods.skillopt_prompts import (
    ANALYST_SYSTEM,
    FINAL_MERGE_SYSTEM,
    GUIDANCE_TAG,
    MERGE_SYSTEM,
    META_SYSTEM,
    SLOW_SYSTEM,
)
from stratune_core.operators.patches import Edit, EditOp
from stratune_core.records.enums import StopReason
from stratune_core.records.method_spec import SkillOptMethod
from stratune_core.records.purposes import MethodPurpose, UpdateVerdict
from stratune_core.state.context import Env
from tests.support.toy import InProcessLLM, ToyTask
from tests.support.toy_methods import MethodOptimizer, method_target, run_method, unattributed

FINAL = "final: the last skill against the best"


def _of(events, cls):
    return [e for e in events if isinstance(e, cls)]


def test_the_edit_budget_follows_the_released_cosine_scheduler():
    """microsoft/SkillOpt's cosine scheduler: step k of n (from 1) at t = k/n, rounded half to
    even, never below the minimum: over 4 steps 4, 3, 2, 2 (not 4, 4, 3, 2)."""
    assert [edit_limit(4, 2, k, 4) for k in range(1, 5)] == [4, 3, 2, 2]
    assert [edit_limit(4, 2, k, 3) for k in range(1, 4)] == [4, 2, 2]  # 3.5 -> 4, 2.5 -> 2
    limits = [edit_limit(4, 2, k, 9) for k in range(1, 10)]
    assert limits == sorted(limits, reverse=True) and limits[-1] == 2 and 3 in limits
    assert edit_limit(4, 2, 1, 1) == 4


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
        if d.verdict is UpdateVerdict.KEPT and d.detail != SLOW_DETAIL:
            assert d.score > d.reference_score  # strictly better
        if d.verdict is UpdateVerdict.REVERTED:
            assert d.score <= d.reference_score
    assert unattributed(events, 6 * 96) is None
    assert events[-1].reason is StopReason.COMPLETED


def test_the_schedule_advances_only_on_steps_with_proposals():
    """The released trainer steps its scheduler after the no-proposal skip: a step whose
    analysts proposed nothing leaves the next step's budget where it was."""
    total = 4 * 2  # 4 epochs of 64 fit samples in batches of 40
    for seed in range(3):
        events, _, _ = run_method(SkillOptMethod(), Config(seed=seed), ToyTask(n_train=96))
        selected = _of(events, EditsSelected)
        k = 1
        for e in selected:
            assert e.limit == edit_limit(4, 2, k, total) and e.applied <= e.limit
            k += e.proposed > 0
    assert any(e.proposed == 0 for e in selected) or k > 1


def test_slow_update_and_meta_guidance_at_every_epoch_end_from_the_second():
    """The released defaults: slow update and meta guidance at every epoch end from the second
    epoch on; the slow update is taken without a validation (not gated on the selection split)
    and writes the skill's protected guidance section; the meta guidance reaches the next
    epoch's analysts and merges."""
    events, state, llm = run_method(SkillOptMethod(), Config(seed=0), ToyTask(n_train=96))
    reviewed = _of(events, EpochReviewed)
    assert [r.epoch for r in reviewed] == [1, 2, 3]
    assert all(r.improved + r.regressed + r.persistent_fail + r.stable_success == 20
               for r in reviewed)
    slow = [d for d in _of(events, ev.UpdateDecided) if d.detail == SLOW_DETAIL]
    assert slow and all(d.verdict is UpdateVerdict.KEPT and d.score is None for d in slow)
    final_check = {d.candidate_id for d in _of(events, ev.UpdateDecided) if d.detail == FINAL}
    validated = {x.skill_id for x in _of(events, ev.TargetExecuted)
                 if x.purpose is MethodPurpose.VALIDATION}
    assert not {d.candidate_id for d in slow} & validated - final_check
    assert all(GUIDANCE_OPEN in state.text(d.candidate_id) for d in slow)
    for system in (ANALYST_SYSTEM, MERGE_SYSTEM):
        assert any(c.system == system and f"<{GUIDANCE_TAG}>" in c.messages[0].text()
                   for c in llm.calls)


@frozen
class _Silent(MethodOptimizer):
    """Analysts that never propose: no step changes the skill."""

    def __call__(self, request):
        if request.system == ANALYST_SYSTEM:
            return Response(text="Nothing to add.", usage=Usage(input_tokens=1, output_tokens=1))
        return super().__call__(request)


def test_epoch_ends_run_even_when_the_epoch_changed_nothing():
    """The released trainer skips neither the slow update nor the meta guidance when an epoch
    left the skill as it was (only the first epoch has none)."""
    events, _, llm = run_method(SkillOptMethod(), Config(seed=0), ToyTask(n_train=96),
                                _Silent())
    assert not [d for d in _of(events, ev.UpdateDecided) if d.detail not in (SLOW_DETAIL, FINAL)
                and d.verdict is not UpdateVerdict.UNUSABLE]
    assert [r.epoch for r in _of(events, EpochReviewed)] == [1, 2, 3]
    assert sum(c.system == META_SYSTEM for c in llm.calls) == 3
    assert sum(c.system == SLOW_SYSTEM for c in llm.calls) == 3


def test_the_final_skill_is_the_best_unless_the_last_beats_it():
    """The best on the selection split is final; a last skill that only a slow update made is
    validated once and replaces it only if strictly better (the released promotion)."""
    for seed in range(3):
        events, _, _ = run_method(SkillOptMethod(), Config(seed=seed), ToyTask(n_train=96))
        final = [d for d in _of(events, ev.UpdateDecided)
                 if d.detail == FINAL]
        if final:
            promoted = final[0].verdict is UpdateVerdict.KEPT
            assert promoted == (final[0].score > final[0].reference_score)
            assert events[-1].final_id == (final[0].candidate_id if promoted
                                           else final[0].parent_id)


def _env(optimizer):
    return Env.build(Config(seed=0), ToyTask(n_train=12),
                     InProcessLLM(target=method_target, optimizer=optimizer))


def _group(*texts):
    return tuple(proposals("".join(
        f'<proposal score="0.5"><edit op="append"><new>{t}</new></edit></proposal>'
        for t in texts)))


def test_failures_and_successes_are_merged_apart_then_failure_first():
    """The released aggregate: each kind merged level by level in batches of 8 (a batch of one
    passes as it is), then one final merge of the two; an unreadable merge reply keeps its
    proposals, the failures' first."""
    calls = []

    def unreadable(request):
        calls.append(request)
        return Response(text="no proposals here", usage=Usage(input_tokens=1, output_tokens=1))

    failures = [_group(f"f{i}") for i in range(10)]
    successes = [_group("s0"), ()]
    merged = merge(_env(unreadable), "SKILL", failures, successes, 8)
    assert [c.system for c in calls] == [MERGE_SYSTEM, MERGE_SYSTEM, MERGE_SYSTEM,
                                         FINAL_MERGE_SYSTEM]
    assert all("failed executions" in c.messages[0].text() for c in calls[:3])
    assert [p.edit.new for p in merged] == [*(f"f{i}" for i in range(10)), "s0"]
    calls.clear()
    assert [p.edit.new for p in merge(_env(unreadable), "SKILL", [], successes, 8)] == ["s0"]
    assert calls == []  # one group of one kind: nothing to merge


def test_edits_do_not_touch_the_guidance_section():
    """The released protected section: an edit aimed inside it is skipped, an append goes
    before it, marker text in an edit is dropped, and a new guidance replaces the old."""
    skill = with_guidance("Answer briefly.", "Prefer the bare value.")
    assert guidance_of(skill) == "Prefer the bare value."
    inside = _group("x")[0]
    inside = attrs.evolve(inside, edit=Edit(op=EditOp.REPLACE, old="Prefer the bare value.",
                                            new="Write sentences."))
    appended = _group(f"New rule. {GUIDANCE_OPEN}")[0]
    text, applied = apply_selected(skill, [inside, appended])
    assert applied == 1 and guidance_of(text) == "Prefer the bare value."
    assert text.index("New rule.") < text.index(GUIDANCE_OPEN) and text.count(GUIDANCE_OPEN) == 1
    again = with_guidance(text, "Keep the value only.")
    assert guidance_of(again) == "Keep the value only." and again.count(GUIDANCE_OPEN) == 1
    assert "New rule." in again


def test_a_small_budget_stops_before_a_step_it_cannot_gate():
    events, _, _ = run_method(SkillOptMethod(), Config(seed=2, budget=120), ToyTask(n_train=96))
    assert events[-1].reason is StopReason.BUDGET
    assert unattributed(events, 120) is None
