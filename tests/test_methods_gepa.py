"""GEPA over the toy world through the `gepa` package: the 80/20 split into GEPA's trainset and
valset, reflection minibatches of 3 drawn from the fit side, a pool grown only by proposals
strictly better on their minibatch, the final skill the pool's best on validation, the budget
never passed, and a failed reflection call ending the run instead of being swallowed."""

from __future__ import annotations

import pytest

import stratune_core.state.events as ev
from llm_cache.errors import LLMFatalError
from llm_cache.records import Request, Response
from stratune_core.config.knobs import Config
from stratune_core.config.serde import unstructure
from stratune_core.methods import gepa_prompts
from stratune_core.methods.gepa_events import GepaIteration
from stratune_core.records.enums import StopReason
from stratune_core.records.method_spec import GepaMethod
from stratune_core.records.purposes import MethodPurpose
from stratune_core.round.registry import iterate_method
from tests.support.toy import RULES, InProcessLLM, ToyTask
from tests.support.toy_methods import MethodOptimizer, method_target, run_method, unattributed


def _of(events, cls):
    return [e for e in events if isinstance(e, cls)]


def test_a_run_splits_80_20_and_learns_within_the_budget():
    events, state, _ = run_method(GepaMethod(), Config(seed=3), ToyTask(n_train=48))
    split = _of(events, ev.SplitMade)[0]
    assert len(split.validation_ids) == round(0.2 * 48)
    assert sorted(split.fit_ids + split.validation_ids) == sorted(f"s{i:03d}" for i in range(48))
    assert unattributed(events, 6 * 48) is None
    assert any(rule in state.text(events[-1].final_id) for rule in RULES.values())
    assert _of(events, GepaIteration)


def test_minibatches_of_three_from_the_fit_side_and_validation_on_the_other():
    events, _, _ = run_method(GepaMethod(), Config(seed=4), ToyTask(n_train=30))
    split = _of(events, ev.SplitMade)[0]
    for it in _of(events, GepaIteration):
        assert len(it.minibatch_ids) == 3 and set(it.minibatch_ids) <= set(split.fit_ids)
    for e in _of(events, ev.TargetExecuted):
        side = split.validation_ids if e.purpose is MethodPurpose.VALIDATION else split.fit_ids
        assert set(e.sample_ids) <= set(side)


def test_the_pool_grows_only_by_strictly_better_proposals_and_the_final_is_its_best():
    """GEPA's acceptance (strictly better sum on the minibatch), its Pareto front drawn from
    the pool, and its best-on-validation final choice, read back from our events."""
    accepted = rejected = 0
    for seed in range(4):
        events, _, _ = run_method(GepaMethod(), Config(seed=seed), ToyTask(n_train=36))
        pool = [events[0].initial_skill_id]
        for it in _of(events, GepaIteration):
            assert it.parent_id in pool
            if it.candidate_id is not None:
                better = sum(it.candidate_scores) > sum(it.parent_scores)
                assert it.accepted == better
                if it.accepted:
                    accepted += 1
                    pool.append(it.candidate_id)
                    assert it.validation is not None
                else:
                    rejected += 1
            assert set(it.front) <= set(pool)
        final = _of(events, ev.FinalChosen)[0]
        assert list(final.skill_ids) == pool
        best = max(final.scores)
        assert final.final_id == final.skill_ids[final.scores.index(best)]
        assert events[-1].final_id == final.final_id
    assert accepted and rejected


def test_parent_scores_are_the_ledgers_and_nothing_is_paid_twice():
    events, state, _ = run_method(GepaMethod(), Config(seed=5), ToyTask(n_train=36))
    for it in _of(events, GepaIteration):
        if it.parent_scores:
            assert it.parent_scores == state.ledger.scores(it.parent_id, it.minibatch_ids)
    pairs = [(e.skill_id, x) for e in _of(events, ev.TargetExecuted) for x in e.sample_ids]
    assert len(pairs) == len(set(pairs))


def test_a_small_budget_is_refused_not_passed():
    events, _, _ = run_method(GepaMethod(), Config(seed=3, budget=25), ToyTask(n_train=48))
    assert events[-1].reason is StopReason.BUDGET
    assert unattributed(events, 25) is None
    assert _of(events, ev.ExecutionsRefused) or events[-1].spent == 25


def test_a_budget_below_the_validation_split_keeps_the_initial_skill():
    events, _, _ = run_method(GepaMethod(), Config(seed=3, budget=5), ToyTask(n_train=48))
    assert _of(events, ev.ExecutionsRefused) and events[-1].spent == 0
    assert events[-1].final_id == events[0].initial_skill_id


def test_same_seed_same_events_and_max_rounds():
    a, _, _ = run_method(GepaMethod(), Config(seed=9, max_rounds=6), ToyTask(n_train=36))
    b, _, _ = run_method(GepaMethod(), Config(seed=9, max_rounds=6), ToyTask(n_train=36))
    assert [unstructure(e) for e in a] == [unstructure(e) for e in b]
    assert a[-1].reason is StopReason.MAX_ROUNDS and len(_of(a, GepaIteration)) == 6


def test_other_seeds_draw_other_minibatches():
    def draws(seed):
        events, _, _ = run_method(GepaMethod(), Config(seed=seed, max_rounds=4),
                                  ToyTask(n_train=36))
        return [it.minibatch_ids for it in _of(events, GepaIteration)]

    assert draws(1) != draws(2)


class _FailingReflection:
    """The toy optimizer, except that GEPA's `fail_at`-th reflection call fails for good."""

    def __init__(self, fail_at: int) -> None:
        self.inner = MethodOptimizer()
        self.fail_at = fail_at
        self.seen = 0

    def __call__(self, request: Request) -> Response:
        if request.system == gepa_prompts.REFLECTION_SYSTEM:
            self.seen += 1
            if self.seen == self.fail_at:
                raise LLMFatalError("the optimizer refused the request")
        return self.inner(request)


def test_a_failed_reflection_call_ends_the_run_instead_of_being_swallowed():
    """GEPA logs its reflection LM's exceptions and goes on; ours must stop the run (a rerun
    resumes from the cache), with nothing after the failure."""
    optimizer = _FailingReflection(fail_at=2)
    llm = InProcessLLM(target=method_target, optimizer=optimizer)
    seen = []
    with pytest.raises(LLMFatalError):
        for _, evs in iterate_method(GepaMethod(), Config(seed=3), ToyTask(n_train=36), llm):
            seen.extend(evs)
    assert optimizer.seen == 2
    assert not _of(seen, ev.RunFinished)
    reflections = [r for r in llm.calls if r.system == gepa_prompts.REFLECTION_SYSTEM]
    assert len(reflections) == 2


def test_reflection_goes_through_our_llm_with_its_call_kind():
    _, _, llm = run_method(GepaMethod(), Config(seed=3, max_rounds=3), ToyTask(n_train=30))
    reflections = [r for r in llm.calls if r.system == gepa_prompts.REFLECTION_SYSTEM]
    assert reflections and all(r.kind.value == "reflection" for r in reflections)
    # GEPA's own template, filled with our records of the minibatch
    assert all("Expected answer:" in r.messages[0].text() for r in reflections)


def test_without_the_gepa_package_the_method_is_a_one_line_error(monkeypatch):
    import sys

    from stratune_core.methods.gepa_run import require_gepa
    from stratune_core.records.errors import ConfigError

    monkeypatch.setitem(sys.modules, "gepa", None)  # an import of it now fails
    with pytest.raises(ConfigError) as caught:
        require_gepa()
    assert "stratune[gepa]" in str(caught.value) and "\n" not in str(caught.value)
