"""TextGrad over the toy world: minibatches of 3, updates reverted when validation drops, the
budget never passed and every execution attributed."""

from __future__ import annotations

from collections import Counter

from attrs import field, frozen

import stratune_core.state.events as ev
from llm_cache.records import Response, Usage
from stratune_core.config.knobs import Config
from stratune_core.config.serde import unstructure
from stratune_core.methods import textgrad_prompts
from stratune_core.methods.textgrad import estimate
from stratune_core.methods.textgrad_reply import opened_block
from stratune_core.records.enums import StopReason
from stratune_core.records.method_spec import TextGradMethod
from stratune_core.records.purposes import MethodPurpose, UpdateVerdict
from tests.support.toy import RULES, ToyTask
from tests.support.toy_methods import MethodOptimizer, run_method, unattributed


def _of(events, cls):
    return [e for e in events if isinstance(e, cls)]


def test_a_run_splits_80_20_and_learns_within_the_budget():
    """The fit and validation ids partition train 80/20; the final skill holds learnt rules."""
    events, state, _ = run_method(TextGradMethod(), Config(seed=3), ToyTask(n_train=48))
    split = _of(events, ev.SplitMade)[0]
    assert len(split.validation_ids) == round(0.2 * 48)
    assert sorted(split.fit_ids + split.validation_ids) == sorted(f"s{i:03d}" for i in range(48))
    assert unattributed(events, 6 * 48) is None
    final = events[-1]
    assert any(rule in state.text(final.final_id) for rule in RULES.values())


def test_rollouts_are_minibatches_of_three_from_the_fit_split():
    events, _, _ = run_method(TextGradMethod(), Config(seed=4), ToyTask(n_train=30))
    split = _of(events, ev.SplitMade)[0]
    rollouts = [e for e in _of(events, ev.TargetExecuted) if e.purpose is MethodPurpose.ROLLOUT]
    assert rollouts
    for e in rollouts:
        assert len(e.sample_ids) + e.reused == 3 or len(split.fit_ids) % 3
        assert set(e.sample_ids) <= set(split.fit_ids)
    for e in _of(events, ev.TargetExecuted):
        if e.purpose is MethodPurpose.VALIDATION:
            assert set(e.sample_ids) <= set(split.validation_ids)


def test_an_update_that_lowers_validation_is_reverted():
    """The toy optimizer's over-general rules lose on validation: the current skill stays."""
    seen = Counter()
    for seed in range(6):
        events, _, _ = run_method(TextGradMethod(), Config(seed=seed), ToyTask(n_train=36))
        for d in _of(events, ev.UpdateDecided):
            seen[d.verdict] += 1
            if d.verdict is UpdateVerdict.REVERTED:
                assert d.score < d.reference_score
            if d.verdict is UpdateVerdict.KEPT:
                assert d.score >= d.reference_score
    assert seen[UpdateVerdict.REVERTED] and seen[UpdateVerdict.KEPT]
    assert seen[UpdateVerdict.UNUSABLE]


def test_current_skill_follows_kept_updates_only():
    events, _, _ = run_method(TextGradMethod(), Config(seed=5), ToyTask(n_train=36))
    current = events[0].initial_skill_id
    for d in _of(events, ev.UpdateDecided):
        assert d.parent_id == current
        if d.verdict is UpdateVerdict.KEPT:
            current = d.candidate_id
    assert events[-1].final_id == current


def test_a_small_budget_stops_before_a_step_it_cannot_finish():
    events, _, _ = run_method(TextGradMethod(), Config(seed=3, budget=40), ToyTask(n_train=48))
    assert events[-1].reason is StopReason.BUDGET
    assert unattributed(events, 40) is None
    # a step needs its minibatch and a whole validation split: what is left is less than that
    assert 40 - events[-1].spent < 3 + 10


def test_same_seed_same_events_and_max_rounds():
    a, _, _ = run_method(TextGradMethod(), Config(seed=9, max_rounds=4), ToyTask(n_train=36))
    b, _, _ = run_method(TextGradMethod(), Config(seed=9, max_rounds=4), ToyTask(n_train=36))
    assert [unstructure(e) for e in a] == [unstructure(e) for e in b]
    assert a[-1].reason is StopReason.MAX_ROUNDS and a[-1].rounds == 4



def test_the_update_is_read_as_textgrads_released_optimizer_reads_it():
    """The text after the first opening tag, up to its closing tag or the end of the reply."""
    tag = "improved_skill"
    assert opened_block(f"x <{tag}>A</{tag}> <{tag}>B</{tag}>", tag) == ("A", True)
    assert opened_block(f"<{tag}>\nA rule.\nAnother, cut at the lim", tag) == (
        "A rule.\nAnother, cut at the lim", False)
    assert opened_block(f"<{tag}>  </{tag}>", tag) == (None, True)
    assert opened_block("I would add a rule.", tag) == (None, False)


class _CutOptimizer(MethodOptimizer):
    """Every update reply stops before its closing tag, as at the token limit."""

    def _update(self, prompt: str) -> str:
        return super()._update(prompt).rsplit("</", 1)[0]


def test_an_update_cut_at_the_token_limit_is_still_validated():
    events, state, _ = run_method(TextGradMethod(), Config(seed=3), ToyTask(n_train=36),
                                  _CutOptimizer(mixed=False))
    decided = [d for d in _of(events, ev.UpdateDecided) if d.candidate_id is not None]
    assert decided
    assert all(d.detail == "no </improved_skill>: read to the end of the reply" for d in decided)
    assert not any(d.verdict is UpdateVerdict.UNUSABLE for d in _of(events, ev.UpdateDecided))
    assert any(rule in state.text(events[-1].final_id) for rule in RULES.values())


def test_two_gradient_calls_per_sample_through_the_evaluation_and_the_model_call():
    """TextGrad's example backpropagates each loss through its evaluation and then through the
    model call: one call of each kind per execution of the minibatch, the second fed by the
    first and shown no expected answer."""
    events, _, llm = run_method(TextGradMethod(), Config(seed=3, max_rounds=5),
                                ToyTask(n_train=36))
    executed = sum(len(e.sample_ids) + e.reused for e in _of(events, ev.TargetExecuted)
                   if e.purpose is MethodPurpose.ROLLOUT)
    on_outputs = [c for c in llm.calls if c.system == textgrad_prompts.OUTPUT_SYSTEM]
    on_skill = [c for c in llm.calls if c.system == textgrad_prompts.GRADIENT_SYSTEM]
    updates = [c for c in llm.calls if c.system == textgrad_prompts.UPDATE_SYSTEM]
    assert executed == 5 * 3 and len(updates) == 5
    assert len(on_outputs) == len(on_skill) == executed
    assert all("<expected>" in c.messages[0].text() for c in on_outputs)
    assert not any("<expected>" in c.messages[0].text() for c in on_skill)
    assert all("<output_feedback>" in c.messages[0].text() for c in on_skill)
    assert estimate(TextGradMethod(), 48, 288).optimizer_calls == (
        estimate(TextGradMethod(), 48, 288).steps * (2 * 3 + 1))


@frozen
class _UntaggedOptimizer(MethodOptimizer):
    """The third update reply has no opening tag."""

    updates: list = field(factory=list)

    def __call__(self, request):
        if request.system == textgrad_prompts.UPDATE_SYSTEM:
            self.updates.append(request)
            if len(self.updates) == 3:
                return Response(text="I would add a rule.",
                                usage=Usage(input_tokens=1, output_tokens=1))
        return super().__call__(request)


def test_a_reply_without_the_opening_tag_ends_the_run_with_the_current_skill():
    """TextGrad's optimizer raises on a reply it cannot split at the opening tag, and its
    example does not catch it: the run ends there and the prompt keeps its value."""
    events, _, _ = run_method(TextGradMethod(), Config(seed=3), ToyTask(n_train=36),
                              _UntaggedOptimizer(mixed=False))
    decided = _of(events, ev.UpdateDecided)
    assert len(decided) == 3
    assert decided[-1].verdict is UpdateVerdict.UNUSABLE and "the run ends" in decided[-1].detail
    assert events[-1].reason is StopReason.NO_USABLE_CANDIDATES
    assert events[-1].final_id == decided[-1].parent_id


def test_the_update_prompt_carries_no_constraint():
    """The example builds its optimizer without constraints: the update asks for the improved
    skill and nothing else (docs/baselines.md says so)."""
    prompt = textgrad_prompts.update_prompt("SKILL", ["FEEDBACK"])
    tail = prompt.split("</feedback>", 1)[1]
    assert "format" not in tail.lower() and "keep" not in tail.lower()
    assert "constraint" not in prompt.lower()
