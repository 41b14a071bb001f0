"""Table 4's hybrids over the toy world: GEPA's or SkillOpt's candidate generation inside
StraTune's rounds. The generator sees the current skill's executions on the round's batch
(nothing else), every candidate's parent is the current skill, no operator is chosen, and
StraTune's candidate evaluation and final selection decide as usual, within B."""

from __future__ import annotations

import pytest

import stratune_core.state.events as ev
from llm_cache.records import CallKind
from stratune_core.config.knobs import Config
from stratune_core.config.serde import unstructure
from stratune_core.methods import gepa_prompts, skillopt_prompts
from stratune_core.records.method_spec import Generator, StraTuneMethod
from tests.support.toy import ToyTask
from tests.support.toy_methods import run_method

SYSTEMS = {Generator.GEPA: {gepa_prompts.REFLECTION_SYSTEM},
           Generator.SKILLOPT: {skillopt_prompts.ANALYST_SYSTEM, skillopt_prompts.MERGE_SYSTEM,
                               skillopt_prompts.FINAL_MERGE_SYSTEM}}


def _of(events, cls):
    return [e for e in events if isinstance(e, cls)]


@pytest.mark.parametrize("generator", list(Generator))
def test_the_generator_sees_the_batch_and_extends_the_current_skill(generator):
    events, state, llm = run_method(StraTuneMethod(generator=generator), Config(seed=3),
                                    ToyTask(n_train=48))
    current = events[0].initial_skill_id
    batch: tuple[str, ...] = ()
    proposed = _of(events, ev.GeneratorProposed)
    assert proposed and all(p.generator is generator for p in proposed)
    for e in events:
        if isinstance(e, ev.BatchExecuted):
            assert e.skill_id == current
            batch = e.sample_ids
        elif isinstance(e, ev.GeneratorProposed):
            assert set(e.sample_ids) <= set(batch)
            if generator is Generator.GEPA:
                assert len(e.sample_ids) == 3
            else:
                assert set(e.sample_ids) == set(batch)
        elif isinstance(e, ev.CandidateGenerated):
            assert e.parent_id == current
        elif isinstance(e, ev.SkillReplaced):
            current = e.current_id
    assert not _of(events, ev.OperatorChosen)
    assert any(p.candidate_id for p in proposed)
    decided = {d.verdict.value for d in _of(events, ev.CandidateDecided)}
    assert "accepted" in decided
    assert events[-1].spent <= events[-1].budget == 6 * 48
    # the only optimizer calls are the generator's: no strategy selection, no StraTune prompt
    systems = {r.system for r in llm.calls if r.role.value == "optimizer"}
    assert systems <= SYSTEMS[generator] and systems
    assert all(r.kind is not CallKind.STRATEGY_SELECTION for r in llm.calls)


@pytest.mark.parametrize("generator", list(Generator))
def test_candidates_are_screened_away_from_what_the_generator_saw(generator):
    events, _, _ = run_method(StraTuneMethod(generator=generator), Config(seed=4),
                              ToyTask(n_train=48))
    batch: tuple[str, ...] = ()
    shown: set[str] = set()
    for e in events:
        if isinstance(e, ev.BatchExecuted):
            batch = e.sample_ids
        elif isinstance(e, ev.GeneratorProposed) and e.candidate_id:
            shown = set(batch) | set(e.sample_ids)
        elif isinstance(e, ev.StageResult):
            assert not set(e.sample_ids) & shown


@pytest.mark.parametrize("generator", list(Generator))
def test_same_seed_same_events(generator):
    a, _, _ = run_method(StraTuneMethod(generator=generator), Config(seed=7, max_rounds=5),
                         ToyTask(n_train=36))
    b, _, _ = run_method(StraTuneMethod(generator=generator), Config(seed=7, max_rounds=5),
                         ToyTask(n_train=36))
    assert [unstructure(e) for e in a] == [unstructure(e) for e in b]


def test_the_hybrid_differs_from_stratune_only_in_generation():
    """Same seed, same task: the rounds execute the same first batch; StraTune chooses an
    operator where the hybrid asks its generator."""
    own, _, _ = run_method(StraTuneMethod(), Config(seed=5, max_rounds=1), ToyTask(n_train=36))
    hybrid, _, _ = run_method(StraTuneMethod(generator=Generator.GEPA),
                              Config(seed=5, max_rounds=1), ToyTask(n_train=36))
    assert _of(own, ev.BatchExecuted) == _of(hybrid, ev.BatchExecuted)
    assert _of(own, ev.OperatorChosen) and not _of(own, ev.GeneratorProposed)
    assert _of(hybrid, ev.GeneratorProposed) and not _of(hybrid, ev.OperatorChosen)
