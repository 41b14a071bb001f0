"""The exact reserve for final skill selection, the saved pool's cap, and a candidate whose
validation cannot be paid (docs/design.md, "Budget")."""

from __future__ import annotations

import numpy as np
import pytest

import stratune_core.state.events as ev
from stratune_core.config.knobs import Config
from stratune_core.config.profiles import released
from stratune_core.records.base import Execution
from stratune_core.records.enums import Stage, Strategy, Verdict
from stratune_core.round.candidate_eval import Submission, evaluate_candidate
from stratune_core.round.pool import contenders, prune
from stratune_core.round.reserve import exact_reserve, held, refresh
from stratune_core.state.context import Env
from stratune_core.state.state import State, initial_state
from tests.support.toy import RULES, InProcessLLM, ToyTask

TASK = ToyTask(n_train=48)
IDS = tuple(s.id for s in TASK.split("train"))


def _env(config: Config) -> Env:
    return Env.build(config, TASK, InProcessLLM())


def _ran(state: State, skill: str, ids, score: float = 1.0) -> State:
    runs = [Execution(skill_id=skill, sample_id=x, score=score, solved=score == 1.0) for x in ids]
    return state.evolve(ledger=state.ledger.add(runs))


def _with_candidates(config: Config, *rules: str) -> tuple[State, list[str]]:
    state = initial_state(config, TASK)
    ids = []
    for rule in rules:
        state, sid, _ = state.with_skill(state.current_text + "\n" + rule, state.current_id)
        ids.append(sid)
    return state, ids


def test_exact_reserve_is_what_final_selection_would_run_now():
    config = Config(budget=288)
    env = _env(config)
    state, (a, b) = _with_candidates(config, RULES["U"], RULES["R"])
    assert exact_reserve(state, env) == 0 == held(state, env)  # nothing saved
    state = _ran(_ran(state, state.current_id, IDS[:40]), a, IDS[:30])
    state = state.evolve(saved=(a,))
    assert exact_reserve(state, env) == (48 - 40) + (48 - 30)  # the ledger pays for the rest
    state = _ran(state.evolve(saved=(a, b)), b, IDS[10:20])
    assert exact_reserve(state, env) == 8 + 18 + 38
    assert refresh(state, env).budget.reserve == 64
    # an accepted candidate that is the current skill has no one to be compared with
    assert exact_reserve(state.evolve(saved=(state.current_id,)), env) == 0


def test_the_reserve_held_is_at_most_what_is_left_and_fixed_when_released():
    config = Config(budget=288)
    state, (a,) = _with_candidates(config, RULES["U"])
    state = state.evolve(saved=(a,), budget=state.budget.charge(280))
    assert exact_reserve(state, _env(config)) == 96 and held(state, _env(config)) == 8
    fixed = released().replace(budget=288)
    assert held(initial_state(fixed, TASK), _env(fixed)) == 72
    assert held(state, _env(Config(budget=288, reserve=20))) == 20


def test_the_pool_keeps_the_current_skill_and_the_best_by_the_released_rule():
    """Cap 3 with the current skill saved: two others stay, ranked by 10 x wins over the
    current skill + their mean score on the samples both ran."""
    config = Config(budget=288)
    state, (a, b, c, d) = _with_candidates(config, *RULES.values())
    state = _ran(state, state.current_id, IDS[:10], 0.0)
    state = _ran(state, a, IDS[:10], 0.0)  # no wins
    state = _ran(_ran(state, b, IDS[:3], 1.0), b, IDS[3:10], 0.0)  # 3 wins
    state = _ran(_ran(state, c, IDS[:3], 1.0), c, IDS[3:10], 0.0)  # 3 wins, saved later
    state = _ran(state, d, IDS[:1], 1.0)  # 1 win
    state = state.evolve(saved=(a, b, state.current_id, c, d))
    pruned, events = prune(state, 3)
    assert pruned.saved == (b, state.current_id, c)
    assert [e.candidate_id for e in events] == [a, d]
    assert all(isinstance(e, ev.CandidatePruned) for e in events)
    assert prune(state, None)[0] is state and prune(state, 5)[1] == ()
    kept, _ = prune(state.evolve(saved=(a, b, c, d)), 2)  # current not saved: two seats
    assert kept.saved == (b, c)
    assert contenders(pruned, None) == (b, c) and contenders(pruned, 1) == (b,)


@pytest.mark.parametrize("validation", [True, False])
def test_a_screened_candidate_whose_validation_cannot_be_paid_is_saved(validation):
    """Budget 80 pays for screening (31 + 31 executions: Q_s leaves 14 samples for Q_v) but
    not for validation: the candidate is not accepted, it is saved for final skill selection,
    and the reserve grows to hold (part of) what final selection needs for it."""
    config = Config(budget=80, validation=validation)
    env = _env(config)
    state, (cand,) = _with_candidates(config, RULES["U"])
    sub = Submission(candidate_id=cand, strategy=Strategy.I1, form=None, theme="U rule",
                     exclude=frozenset(state.batches[0]))
    state, events, evaluated = evaluate_candidate(state, env, sub, np.random.default_rng(0))
    screening = next(e for e in events if isinstance(e, ev.StageResult))
    assert screening.outcome.passed
    assert len(screening.sample_ids) == (31 if validation else 36)  # 45 eligible, 14 kept for Q_v
    if not validation:  # accepted on screening alone
        assert evaluated.entry.verdict is Verdict.ACCEPTED and state.current_id == cand
        return
    unpaid = next(e for e in events if isinstance(e, ev.CandidateUnaffordable))
    assert unpaid.stage is Stage.VALIDATION
    assert evaluated.entry.verdict is Verdict.UNAFFORDABLE
    assert state.saved == (cand,) and state.current_id != cand
    assert state.budget.spent == 62 and state.budget.reserve == 18  # all that is left
