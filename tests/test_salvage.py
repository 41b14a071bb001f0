"""Donor salvage (released code only, docs/released-code.md §3.6): before final selection, the
optimizer merges into s_t what made another skill of the run solve samples s_t fails, and the
merge goes through candidate evaluation like any candidate."""

from __future__ import annotations

import numpy as np

import stratune_core.state.events as ev
from llm_cache.records import Role
from stratune_core.config.knobs import Config
from stratune_core.config.mechanisms import DonorSalvage
from stratune_core.config.profiles import released
from stratune_core.records.enums import Purpose, Strategy, Verdict
from stratune_core.round.execute import execute_groups
from stratune_core.round.final import final_selection
from stratune_core.round.salvage import donors, salvage
from stratune_core.state.context import Env
from stratune_core.state.history import HistoryEntry
from stratune_core.state.state import State, initial_state
from tests.support.toy import BAD_RULES, RULES, InProcessLLM, ToyOptimizer, ToyTask

TASK = ToyTask(n_train=200)
IDS = tuple(s.id for s in TASK.split("train"))
RELEASED = released().replace(seed=2)


def _world(config: Config, donor_runs: int = 40) -> tuple[State, Env, InProcessLLM, str]:
    """s_t knows the [U] rule and ran 120 samples; the donor, "always reverse" (rejected in
    round 3), ran `donor_runs` of them and solves their [R] words, which s_t fails."""
    llm = InProcessLLM(optimizer=ToyOptimizer(style="good"))
    env = Env.build(config, TASK, llm)
    state = initial_state(config, TASK)
    state, cur, _ = state.with_skill(state.current_text + "\n" + RULES["U"], state.current_id)
    state, donor, _ = state.with_skill(state.current_text + "\n" + BAD_RULES["R"], cur)
    state = state.evolve(current_id=cur, history=state.history.add_entry(HistoryEntry(
        round=3, strategy=Strategy.I1, form=None, candidate_id=donor,
        verdict=Verdict.REJECTED_SCREENING, screen_gain=-0.2)))
    groups = [(cur, IDS[:120]), (donor, IDS[:donor_runs])]
    state, _, admitted = execute_groups(state, env, groups, purpose=Purpose.FEEDBACK)
    assert admitted
    return state, env, llm, donor


def _r_words(ids) -> tuple[str, ...]:
    return tuple(s.id for s in TASK.split("train") if s.id in ids and s.payload["marker"] == "R")


def test_donors_solve_what_the_current_skill_fails():
    state, env, _, donor = _world(RELEASED)
    assert donors(state, env) == ((donor, _r_words(IDS[:40])),)
    few, env, _, _ = _world(RELEASED, donor_runs=15)  # fewer than 20 samples run
    assert donors(few, env) == ()
    picky = RELEASED.replace(donor_salvage=DonorSalvage(min_rescues=8))  # 7 rescues
    assert donors(_world(picky)[0], Env.build(picky, TASK, InProcessLLM())) == ()


def test_salvage_merges_the_donors_rescues_into_the_current_skill():
    state, env, llm, donor = _world(RELEASED)
    before = state.current_id
    state, events = salvage(state, env, np.random.default_rng(0))
    (attempt,) = [e for e in events if isinstance(e, ev.SalvageAttempted)]
    assert attempt.donor_id == donor and attempt.rescues == _r_words(IDS[:40])
    merged = attempt.candidate_id
    assert merged is not None and state.parents[merged] == before
    assert state.text(merged) == state.text(before) + "\n\n" + RULES["R"] + "\n"
    prompt = [r for r in llm.calls if r.role is Role.OPTIMIZER][-1].messages[0].text()
    assert BAD_RULES["R"] in prompt and "Samples the donor solves" in prompt
    assert "rejected_screening (none recorded, screening gain -0.200)" in prompt
    screened = [e for e in events if isinstance(e, ev.StageResult)]
    assert screened and not set(attempt.rescues) & {x for e in screened for x in e.sample_ids}
    assert any(isinstance(e, ev.SkillReplaced) and e.current_id == merged for e in events)


def test_final_selection_salvages_first_only_when_configured():
    for config, expected in ((RELEASED, 1), (RELEASED.replace(donor_salvage=None), 0)):
        state, env, _, _ = _world(config)
        _, events, _ = final_selection(state, env, np.random.default_rng(0))
        assert sum(isinstance(e, ev.SalvageAttempted) for e in events) == expected


def test_salvage_stops_when_not_even_screening_can_be_paid():
    state, env, llm, _ = _world(RELEASED)
    calls = len(llm.calls)
    state = state.evolve(budget=state.budget.charge(state.budget.remaining - 5, use_reserve=True))
    state, events = salvage(state, env, np.random.default_rng(0))
    assert events == () and len(llm.calls) == calls  # not even the optimizer was asked
