"""Trace2Skill over the toy world: one analyst per trajectory, three seeded consolidations,
the best on the evolution samples or the initial skill."""

from __future__ import annotations

from attrs import frozen

import stratune_core.state.events as ev
from llm_cache.records import CallKind
from stratune_core.config.knobs import Config
from stratune_core.methods import trace2skill_prompts
from stratune_core.methods.splits import balanced_chunks
from stratune_core.methods.trace2skill import estimate
from stratune_core.methods.trace2skill_events import ConsolidationDone, LessonsExtracted
from stratune_core.records.method_spec import Trace2SkillMethod
from stratune_core.records.purposes import MethodPurpose
from tests.support.toy import ToyTask
from tests.support.toy_methods import MethodOptimizer, run_method, unattributed


def _of(events, cls):
    return [e for e in events if isinstance(e, cls)]


def test_every_trajectory_is_analysed_and_each_seed_consolidates():
    events, _, llm = run_method(Trace2SkillMethod(), Config(seed=0), ToyTask(n_train=48))
    lessons = _of(events, LessonsExtracted)
    assert len(lessons) == 48 and {e.solved for e in lessons} == {True, False}
    assert len([r for r in llm.calls if r.kind is CallKind.REFLECTION]) == 48
    assert [e.seed for e in _of(events, ConsolidationDone)] == [41, 42, 43]
    assert unattributed(events, 288) is None


def test_the_seeds_change_the_grouping():
    """The same lessons in three orders: the merge prompts differ between seeds."""
    events, _, llm = run_method(Trace2SkillMethod(seeds=(41, 42)), Config(seed=0),
                                ToyTask(n_train=48))
    merges = [r.messages[0].text() for r in llm.calls if r.kind is CallKind.SKILL_UPDATE
              and "Lessons from several trajectories" in r.messages[0].text()]
    first = _of(events, ConsolidationDone)[0].groups
    assert 0 < first < len(merges)
    assert merges[0] != merges[first]  # each seed's first group holds other records


def test_final_is_the_best_candidate_or_the_initial_skill():
    outcomes = set()
    for seed in range(8):
        events, _, _ = run_method(Trace2SkillMethod(seeds=(41,) if seed % 2 else (41, 42, 43)),
                                  Config(seed=seed), ToyTask(n_train=36))
        chosen = _of(events, ev.FinalChosen)[0]
        initial = chosen.skill_ids[0]
        assert initial == events[0].initial_skill_id
        best = max(chosen.scores[1:], default=-1.0)
        if best >= chosen.scores[0]:
            assert chosen.final_id != initial
            assert chosen.scores[chosen.skill_ids.index(chosen.final_id)] == best
        else:
            assert chosen.final_id == initial
        outcomes.add(chosen.final_id == initial)
        assert events[-1].final_id == chosen.final_id
        selection = [e for e in _of(events, ev.TargetExecuted)
                     if e.purpose is MethodPurpose.SELECTION]
        assert len(selection) == len(chosen.skill_ids) - 1
    assert outcomes == {True, False}


def test_a_budget_below_four_passes_shrinks_the_evolution_samples():
    events, _, _ = run_method(Trace2SkillMethod(), Config(seed=0, budget=100),
                              ToyTask(n_train=48))
    first = _of(events, ev.TargetExecuted)[0]
    assert len(first.sample_ids) == 25  # 100 // (1 + 3 seeds)
    assert unattributed(events, 100) is None


@frozen
class _OneLessonEach(MethodOptimizer):
    """Every analyst gives one lesson; every merge gives one lesson, or none when `fails`."""

    fails: bool = False

    def _analyse(self, prompt: str) -> str:
        return f"<lesson>lesson {len(prompt) % 97}</lesson>"

    def _merge(self, prompt: str) -> str:
        return "Nothing to merge." if self.fails else "<lesson>merged</lesson>"


def _merge_calls(llm) -> list[str]:
    return [r.messages[0].text() for r in llm.calls
            if r.system == trace2skill_prompts.MERGE_SYSTEM]


def test_groups_of_five_are_merged_into_one_record_level_by_level():
    """48 records: 10 groups (the remainder of 3 is a group), then 2, then 1: 13 merges in
    3 levels, and the skill is written from the one merged record."""
    events, _, llm = run_method(Trace2SkillMethod(seeds=(41,)), Config(seed=0),
                                ToyTask(n_train=48), _OneLessonEach(mixed=False))
    done = _of(events, ConsolidationDone)[0]
    assert (done.groups, done.levels, done.lessons) == (13, 3, 1)
    merges = _merge_calls(llm)
    assert [m.count("<record>") for m in merges[:10]] == [5] * 9 + [3]
    assert [m.count("<record>") for m in merges[10:]] == [5, 5, 2]


def test_the_level_cap_ends_with_one_forced_merge():
    events, _, llm = run_method(Trace2SkillMethod(seeds=(41,), merge_levels=1), Config(seed=0),
                                ToyTask(n_train=48), _OneLessonEach(mixed=False))
    done = _of(events, ConsolidationDone)[0]
    assert (done.groups, done.levels) == (11, 1)
    assert _merge_calls(llm)[-1].count("<record>") == 10


def test_a_merge_without_lessons_keeps_its_groups_records():
    """Merges that give nothing leave the 48 records as they were at every level; the forced
    merge fails too, so the first record (in the seed's order) is written."""
    events, _, llm = run_method(Trace2SkillMethod(seeds=(41,)), Config(seed=0),
                                ToyTask(n_train=48), _OneLessonEach(mixed=False, fails=True))
    done = _of(events, ConsolidationDone)[0]
    assert (done.groups, done.levels, done.lessons) == (5 * 10 + 1, 5, 1)
    assert _merge_calls(llm)[-1].count("<record>") == 48


def test_merge_batches_are_balanced_as_the_released_code_batches_them():
    assert [len(g) for g in balanced_chunks(list(range(48)), 5)] == [5] * 9 + [3]
    assert [len(g) for g in balanced_chunks(list(range(47)), 5)] == [6, 6] + [5] * 7
    assert balanced_chunks([1, 2, 3, 4, 5, 6, 7], 5) == ((1, 2, 3, 4, 5, 6, 7),)
    assert balanced_chunks([1, 2], 5) == ((1, 2),)
    assert balanced_chunks([], 5) == ()


def test_plans_estimate_is_the_optimizer_calls_of_a_run_where_every_trajectory_teaches():
    """48 analyses, then per seed 13 merges and a write: what `plan --method trace2skill`
    says before the run."""
    events, _, llm = run_method(Trace2SkillMethod(), Config(seed=0), ToyTask(n_train=48),
                                _OneLessonEach(mixed=False))
    made = sum(1 for r in llm.calls if r.system in (trace2skill_prompts.ANALYST_SYSTEM,
                                                     trace2skill_prompts.MERGE_SYSTEM,
                                                     trace2skill_prompts.WRITE_SYSTEM))
    assert made == estimate(Trace2SkillMethod(), 48, 288).optimizer_calls == 48 + 3 * (13 + 1)
