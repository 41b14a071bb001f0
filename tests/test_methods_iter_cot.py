"""Iter-CoT over the toy world: construction by the target alone, revisions charged to the
budget, summaries logged and not charged, exemplars appended to the initial skill."""

from __future__ import annotations

import stratune_core.state.events as ev
from llm_cache.records import CallKind, Response, Role, Usage
from stratune_core.config.knobs import Config
from stratune_core.methods.iter_cot_events import ExemplarsChosen, RevisionRound, SummaryChecked
from stratune_core.methods.iter_cot_prompts import EXEMPLARS_HEADER, REVISE, REVISE_AGAIN, SUMMARY
from stratune_core.records.enums import StopReason
from stratune_core.records.method_spec import IterCotMethod
from stratune_core.records.purposes import MethodPurpose
from tests.support.toy import INITIAL_SKILL, ToyTask
from tests.support.toy_methods import method_target, run_method, unattributed


def _of(events, cls):
    return [e for e in events if isinstance(e, cls)]


def test_no_optimizer_call_and_every_target_call_at_the_temperature():
    events, _, llm = run_method(IterCotMethod(), Config(seed=3), ToyTask(n_train=48))
    assert all(r.role is Role.TARGET for r in llm.calls)
    assert {r.temperature for r in llm.calls} == {0.7}
    assert unattributed(events, 288) is None


def test_no_temperature_when_the_backend_takes_none():
    _, _, llm = run_method(IterCotMethod(temperature=None), Config(seed=3), ToyTask(n_train=24))
    assert {r.temperature for r in llm.calls} == {None}


def test_revisions_count_and_summaries_do_not():
    events, _, llm = run_method(IterCotMethod(), Config(seed=3), ToyTask(n_train=48))
    charged = _of(events, ev.TargetExecuted)
    construction = [e for e in charged if e.purpose is MethodPurpose.CONSTRUCTION]
    revisions = [e for e in charged if e.purpose is MethodPurpose.REVISION]
    assert len(construction[0].sample_ids) == 48
    rounds = _of(events, RevisionRound)
    assert [len(e.sample_ids) for e in revisions] == [len(r.revised) for r in rounds]
    revise_calls = [r for r in llm.calls if r.kind is CallKind.TARGET_EXECUTION
                    and r.messages[-1].text() in (REVISE, REVISE_AGAIN)]
    assert len(revise_calls) == sum(len(r.revised) for r in rounds)
    # the released pipeline's two turns: "not right", then "still not right"
    firsts = [r for r in revise_calls if r.messages[-1].text() == REVISE]
    assert len(firsts) == len(rounds[0].revised) and len(rounds) > 1
    assert all(sum(m.text() in (REVISE, REVISE_AGAIN) for m in r.messages) == 1 for r in firsts)
    summaries = [r for r in llm.calls if r.kind is CallKind.SUMMARY]
    assert len(summaries) == len(_of(events, SummaryChecked)) > 0
    assert events[-1].spent == 48 + len(revise_calls)


def test_revisions_stop_early_and_never_pass_six():
    for seed in range(4):
        events, _, _ = run_method(IterCotMethod(), Config(seed=seed), ToyTask(n_train=40))
        rounds = _of(events, RevisionRound)
        assert 1 <= len(rounds) <= 6
        assert all(r.corrected for r in rounds[:-1])  # only the last may correct nothing
        if len(rounds) < 6:
            assert not rounds[-1].corrected or not set(rounds[-1].revised) - set(rounds[-1].corrected)
        for before, after in zip(rounds, rounds[1:], strict=False):
            assert set(after.revised) == set(before.revised) - set(before.corrected)


def test_exemplars_are_kept_summaries_of_corrected_answers_only():
    """The paper's pool and the released pipeline's: a summary of a corrected answer, kept only
    if still right; an answer right at once (zero-shot) is never an exemplar."""
    events, state, _ = run_method(IterCotMethod(), Config(seed=5), ToyTask(n_train=48))
    chosen = _of(events, ExemplarsChosen)[0]
    checked = _of(events, SummaryChecked)
    kept = {e.sample_id for e in checked if e.kept}
    corrected = {x for r in _of(events, RevisionRound) for x in r.corrected}
    revised_first = set(_of(events, RevisionRound)[0].revised)
    construction = _of(events, ev.TargetExecuted)[0]
    zero_shot_right = set(construction.sample_ids) - revised_first
    assert zero_shot_right and kept and len(kept) < len(checked)
    assert chosen.pool == len(kept) and set(chosen.sample_ids) <= kept <= corrected
    assert not set(chosen.sample_ids) & zero_shot_right
    final = state.text(events[-1].final_id)
    assert final.startswith(INITIAL_SKILL) and EXEMPLARS_HEADER in final
    assert final.count("Example ") == len(chosen.sample_ids) == min(8, len(kept))
    assert events[-1].reason is StopReason.COMPLETED


def _no_summary_right(request):
    """The toy target, except that every summary gives a wrong answer."""
    if request.messages[-1].text() == SUMMARY:
        return Response(text="<answer>none</answer>", usage=Usage(input_tokens=1, output_tokens=1))
    return method_target(request)


def test_with_no_kept_summary_the_final_skill_is_the_initial_skill():
    """Zero-shot answers do not fill an empty pool: the final skill is the initial one."""
    events, state, _ = run_method(IterCotMethod(), Config(seed=5), ToyTask(n_train=48),
                                  target=_no_summary_right)
    assert _of(events, SummaryChecked) and not any(e.kept for e in _of(events, SummaryChecked))
    assert _of(events, ExemplarsChosen)[0].pool == 0
    assert state.text(events[-1].final_id) == INITIAL_SKILL
    assert events[-1].final_id == events[0].initial_skill_id


def test_a_small_budget_limits_construction_and_revisions():
    events, _, _ = run_method(IterCotMethod(exemplars=2), Config(seed=3, budget=30),
                              ToyTask(n_train=48))
    assert unattributed(events, 30) is None
    assert events[-1].reason is StopReason.BUDGET
    assert len(_of(events, ExemplarsChosen)[0].sample_ids) <= 2


def test_exemplar_counts_follow_the_task():
    spec = IterCotMethod()
    assert [spec.exemplars_for(t) for t in ("docvqa", "livemath", "mind2web",
                                           "spreadsheetbench", "toy")] == [8, 8, 4, 4, 8]
    assert IterCotMethod(exemplars=3).exemplars_for("docvqa") == 3


def test_the_temperature_is_dropped_where_the_backend_rejects_it():
    """Claude API under SDK 2.x: no temperature (manifest: null); a local backend keeps it."""
    from llm_cache.backends.anthropic_backend import AnthropicBackend
    from llm_cache.backends.function import FunctionBackend
    from replay.run.method_options import fit_method, takes_temperature

    claude = AnthropicBackend("claude-haiku-4-5", api_key="x")
    legacy = AnthropicBackend("anthropic.claude-haiku-4-5-20251001-v1:0", provider="bedrock",
                              bedrock_anthropic_version="bedrock-2023-05-31", aws_region="us-east-1")
    opus = AnthropicBackend("anthropic.claude-opus-4-8", provider="bedrock",
                            bedrock_anthropic_version="bedrock-2023-05-31", aws_region="us-east-1")
    local = FunctionBackend(lambda r: r, name="local")
    assert [takes_temperature(b) for b in (claude, legacy, opus, local)] == [
        False, True, False, True]
    assert fit_method(IterCotMethod(), claude).temperature is None
    assert fit_method(IterCotMethod(), local).temperature == 0.7
