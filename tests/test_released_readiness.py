"""The released screening set's readiness: a part under 70 % of its quota (few solved samples
known, or samples worn out by the usage caps) defers the candidate to the next round, where it
is screened against that round's current skill, and a second unready set rejects it for
insufficient evidence. Used sets count towards the usage caps; the paper never defers."""

from __future__ import annotations

import numpy as np

import stratune_core.state.events as ev
from stratune_core.config.knobs import Config
from stratune_core.config.profiles import paper, released
from stratune_core.records.enums import Form, Purpose, Reason, Strategy, Verdict
from stratune_core.round.candidate_eval import Submission, evaluate_candidate
from stratune_core.round.execute import execute_groups
from stratune_core.round.readiness import rescreen_deferred
from stratune_core.state.context import Env
from stratune_core.state.state import State, initial_state
from tests.support.toy import RULES, InProcessLLM, ToyTask

TASK = ToyTask(n_train=120)
IDS = tuple(s.id for s in TASK.split("train"))


def _state(config: Config, ran: int) -> tuple[State, Env, str]:
    """s_0 ran on the first `ran` samples (it solves the [P] ones); a candidate with a rule."""
    env = Env.build(config, TASK, InProcessLLM())
    state = initial_state(config, TASK)
    state, _, admitted = execute_groups(state, env, [(state.current_id, IDS[:ran])],
                                        purpose=Purpose.FEEDBACK)
    assert admitted
    state, cid, _ = state.with_skill(state.current_text + "\n" + RULES["U"], state.current_id)
    return state, env, cid


def _sub(cid: str) -> Submission:
    return Submission(candidate_id=cid, strategy=Strategy.I1, form=Form.F1, theme="t",
                      exclude=frozenset(IDS[:3]))


def test_an_unready_set_defers_then_rejects_for_insufficient_evidence():
    config = released().replace(seed=2)
    state, env, cid = _state(config, ran=12)  # 2 solved samples known: 2 of a quota of 6
    state, events, _ = evaluate_candidate(state, env, _sub(cid), np.random.default_rng(0))
    (deferred,) = events
    assert isinstance(deferred, ev.ScreeningDeferred) and not deferred.retry
    assert (deferred.solved, deferred.solved_quota) == (2, 6)
    assert [s.candidate_id for s in state.deferred] == [cid]
    assert not state.history.entries and not state.screen_usage.solved  # not used, not counted
    state, events = rescreen_deferred(state, env, np.random.default_rng(1))
    assert state.deferred == ()
    decided = [e for e in events if isinstance(e, ev.CandidateDecided)]
    assert decided[0].verdict is Verdict.REJECTED_SCREENING
    assert decided[0].reasons == (Reason.INSUFFICIENT_EVIDENCE,)
    assert any(isinstance(e, ev.ScreeningDeferred) and e.retry for e in events)


def test_a_ready_set_is_screened_and_counted():
    config = released().replace(seed=2)
    state, env, cid = _state(config, ran=120)  # 20 solved known: quota max(6, 20 // 3) = 6
    state, events, evaluated = evaluate_candidate(state, env, _sub(cid), np.random.default_rng(0))
    assert not any(isinstance(e, ev.ScreeningDeferred) for e in events)
    assert evaluated.screening is not None and state.deferred == ()
    sets = 1 + sum(isinstance(e, ev.ProbationOpened) for e in events)  # a second set counts too
    assert sum(state.screen_usage.solved.values()) == 6 * sets
    assert sum(state.screen_usage.random.values()) == 18 * sets


def test_the_paper_screens_whatever_it_knows():
    state, env, cid = _state(paper().replace(seed=2), ran=12)
    state, events, evaluated = evaluate_candidate(state, env, _sub(cid), np.random.default_rng(0))
    assert evaluated.screening is not None and state.deferred == ()
    assert not any(isinstance(e, ev.ScreeningDeferred) for e in events)
