"""The released profile's evaluation mechanisms on the state, in the toy world:
the smoke check, the futility stops of screening and validation, probation's second set, the
branch rule, s0 in the pool, final-selection seats and early stopping that waits for I2. Each
fires in one test and stays silent with its Config field off (the paper's value)."""

from __future__ import annotations

import numpy as np
import pytest

import stratune_core.state.events as ev
from stratune_core.config.knobs import Config
from stratune_core.config.mechanisms import EarlyStopping
from stratune_core.config.profiles import paper, released
from stratune_core.records.enums import (
    Form,
    Purpose,
    Reason,
    SeatRule,
    Stage,
    StopReason,
    Strategy,
    Verdict,
)
from stratune_core.round.candidate_eval import Submission, evaluate_candidate
from stratune_core.round.execute import execute_groups
from stratune_core.round.pool import seating
from stratune_core.round.screening_run import Candidate, screen_candidate
from stratune_core.round.stages import run_stage
from stratune_core.round.step import early_stop, round_step, stop_reason
from stratune_core.state.context import Env
from stratune_core.state.state import State, initial_state
from tests.support.toy import (
    BAD_RULES,
    EMPHASIS_RULE,
    LUCKY_RULE,
    RULES,
    InProcessLLM,
    ToyTask,
    _h,
)

TASK = ToyTask(n_train=200)
SAMPLES = TASK.split("train")
IDS = tuple(s.id for s in SAMPLES)
RELEASED = released().replace(seed=1)


def _env(config: Config) -> Env:
    return Env.build(config, TASK, InProcessLLM())


def _learned(config: Config, markers: str = "URDS", ran: int = 200) -> tuple[State, Env]:
    """The current skill knows the rules for `markers` and ran on the first `ran` samples."""
    env = _env(config)
    state = initial_state(config, TASK)
    text = state.current_text + "\n" + "\n".join(RULES[m] for m in markers)
    state, cur, _ = state.with_skill(text, state.current_id)
    state = state.evolve(current_id=cur)
    state, _, admitted = execute_groups(state, env, [(cur, IDS[:ran])], purpose=Purpose.FEEDBACK)
    assert admitted
    return state, env


def _candidate(state: State, text: str) -> tuple[State, str]:
    state, cid, _ = state.with_skill(text, state.current_id)
    return state, cid


def _evaluate(state: State, env: Env, text: str, seed: int = 0, strategy=Strategy.I1):
    state, cid = _candidate(state, text)
    sub = Submission(candidate_id=cid, strategy=strategy, form=Form.F1, theme="t",
                     exclude=frozenset())
    return evaluate_candidate(state, env, sub, np.random.default_rng(seed))


def _of(events, cls):
    return [e for e in events if isinstance(e, cls)]


def _new(events, cid: str) -> int:
    return sum(e.new for e in _of(events, ev.ExecutionsCharged) if cid in e.skill_ids)


# ---- screening: the smoke check and the stage-1 futility stop -------------------------------

def test_the_smoke_check_rejects_after_eight_executions_of_the_candidate():
    state, env = _learned(RELEASED)
    broken = "Answer with the word."  # no <answer> tags: every sample fails
    state, events, done = _evaluate(state, env, broken)
    (smoke,) = _of(events, ev.SmokeFailed)
    assert (smoke.broken, smoke.kept, len(smoke.sample_ids)) == (8, 0, 8)
    assert done.entry.verdict is Verdict.REJECTED_SCREENING
    assert done.entry.reasons[0] is Reason.SMOKE_BROKEN
    assert _new(events, done.entry.candidate_id) == 8  # the rest of screening never ran


def test_without_the_smoke_check_the_broken_candidate_is_screened_in_full():
    state, env = _learned(RELEASED.replace(screen_smoke=None, screen_futility=None))
    state, events, done = _evaluate(state, env, "Answer with the word.")
    assert not _of(events, ev.SmokeFailed) and not _of(events, ev.FutilityStopped)
    assert _new(events, done.entry.candidate_id) == 36
    assert done.entry.reasons[0] is Reason.GAIN_BELOW_THRESHOLD


def test_stage_one_stops_a_candidate_that_already_lost():
    state, env = _learned(RELEASED)
    text = state.current_text + "\n" + BAD_RULES["U"]  # keeps [U] words, breaks the others
    state, events, done = _evaluate(state, env, text)
    assert not _of(events, ev.SmokeFailed)  # it kept some solved samples
    (stop,) = _of(events, ev.FutilityStopped)
    assert stop.stage is Stage.SCREENING and len(stop.sample_ids) == 18
    assert stop.losses - stop.wins >= 2 and stop.gain < 0
    assert done.entry.reasons[0] is Reason.FUTILITY
    assert _new(events, done.entry.candidate_id) == 18


def test_without_stage_one_the_losing_candidate_is_screened_in_full():
    state, env = _learned(RELEASED.replace(screen_futility=None))
    state, events, done = _evaluate(state, env, state.current_text + "\n" + BAD_RULES["U"])
    assert not _of(events, ev.FutilityStopped)
    assert _new(events, done.entry.candidate_id) == 36


def test_a_stage_that_cannot_be_paid_in_full_is_not_begun():
    state, env = _learned(RELEASED)
    state = state.evolve(budget=state.budget.charge(state.budget.remaining_before_reserve - 10))
    state, cid = _candidate(state, "Answer with the word.")
    state, events, outcome, stopped = run_stage(
        state, env, cand=cid, ref=state.current_id, ids=IDS[150:186], stage=Stage.SCREENING,
        solved=state.ledger.solved_ids(state.current_id))
    assert outcome is None and stopped is None
    assert [type(e) for e in events] == [ev.CandidateUnaffordable]


# ---- validation: the futility stop after 80 samples -------------------------------------------

def _validate(config: Config):
    state, env = _learned(config)
    state, cid = _candidate(state, state.current_text + "\n" + BAD_RULES["U"])
    return run_stage(state, env, cand=cid, ref=state.current_id, ids=IDS[:100],
                     stage=Stage.VALIDATION), cid


def test_validation_stops_after_80_samples_that_show_a_loss():
    (state, events, outcome, stopped), cid = _validate(RELEASED)
    (stop,) = _of(events, ev.FutilityStopped)
    assert stop.stage is Stage.VALIDATION and stop.sample_ids == IDS[:80] and stop.gain < 0
    assert stopped is Reason.FUTILITY and outcome is not None and outcome.stats.n == 80
    assert _new(events, cid) == 80


def test_without_the_validation_stop_all_100_samples_run():
    (state, events, outcome, stopped), cid = _validate(RELEASED.replace(validation_futility=0))
    assert stopped is None and not _of(events, ev.FutilityStopped)
    assert outcome is not None and outcome.stats.n == 100 and _new(events, cid) == 100


# ---- probation and the branch rule ------------------------------------------------------------

def test_an_inconclusive_screening_puts_the_candidate_on_probation():
    """The rule for [S] changes only the [S] samples of Q_s's random part: 3 wins, too few to
    decide on one set; on both sets, 6."""
    state, env = _learned(RELEASED, markers="URD")
    state, events, done = _evaluate(state, env, state.current_text + "\n" + RULES["S"])
    (opened,) = _of(events, ev.ProbationOpened)
    assert opened.changes < RELEASED.ready_changes and len(opened.sample_ids) == 36
    first, second, both = _of(events, ev.StageResult)[:3]
    assert [len(r.sample_ids) for r in (first, second, both)] == [36, 36, 72]
    assert set(first.sample_ids).isdisjoint(second.sample_ids)
    assert first.outcome.passed and both.outcome.stats.wins >= RELEASED.ready_changes
    assert done.entry.verdict is Verdict.ACCEPTED  # then validated, on samples of neither set
    (validation,) = [r for r in _of(events, ev.StageResult) if r.outcome.stage is Stage.VALIDATION]
    assert set(validation.sample_ids).isdisjoint(both.sample_ids)


def test_without_probation_one_screening_set_decides():
    state, env = _learned(RELEASED.replace(probation=None), markers="URD")
    state, events, done = _evaluate(state, env, state.current_text + "\n" + RULES["S"])
    assert not _of(events, ev.ProbationOpened)
    assert [len(r.sample_ids) for r in _of(events, ev.StageResult)] == [36, 100]
    assert done.entry.verdict is Verdict.ACCEPTED


def _branch_set(state: State) -> tuple[tuple[str, ...], frozenset[str]]:
    """Q_s by hand: 18 solved [P]/[U] samples, 9 of them broken by the emphasis rule, then 8
    unsolved [R]/[X] samples the candidate solves and 10 [D]/[S] ones it leaves unsolved."""
    def pick(markers: str, hit: bool, k: int) -> list[str]:
        out = [s.id for s in SAMPLES if s.payload["marker"] in markers
               and (_h(s.payload["word"]) % 3 == 0) == hit]
        return out[:k]

    hits, misses = pick("PU", True, 9), pick("PU", False, 9)
    solved = [x for pair in zip(hits, misses, strict=True) for x in pair]
    winners = pick("R", False, 5) + pick("X", True, 3)
    q_s = tuple(solved + winners + pick("DS", False, 10))
    return q_s, frozenset(solved)


def _branch(config: Config):
    state, env = _learned(config, markers="U")
    q_s, solved = _branch_set(state)
    state, cid = _candidate(state, state.current_text + f"\n{RULES['R']} {EMPHASIS_RULE}")
    cand = Candidate(id=cid, reference=state.current_id, exclude=frozenset())
    return screen_candidate(state, env, cand, q_s, solved, np.random.default_rng(0))


def test_the_branch_rule_saves_wins_and_losses_over_several_strata():
    state, events, screened = _branch(RELEASED)
    (branched,) = _of(events, ev.CandidateBranched)
    assert (branched.wins, branched.losses) == (8, 9)
    assert branched.win_strata == 2 and branched.loss_strata == 2
    assert screened.verdict is Verdict.SAVED and screened.outcome is not None
    assert not screened.outcome.passed and screened.outcome.stats.gain < 0


def test_without_the_branch_rule_the_candidate_is_rejected():
    state, events, screened = _branch(RELEASED.replace(branch_saves=None))
    assert not _of(events, ev.CandidateBranched)
    assert screened.verdict is Verdict.REJECTED_SCREENING


# ---- the pool, final selection's seats, early stopping -----------------------------------------

def test_the_initial_skill_starts_in_the_pool_only_in_the_released_profile():
    assert initial_state(RELEASED, TASK).saved == (initial_state(RELEASED, TASK).current_id,)
    assert initial_state(paper(), TASK).saved == ()
    state, env = _learned(RELEASED)  # the current skill moved on: s0 is now a rival
    s0 = initial_state(RELEASED, TASK).current_id
    state, _, _ = execute_groups(state, env, [(s0, IDS[:30])], purpose=Purpose.FEEDBACK)
    assert seating(state, RELEASED.final_seats, RELEASED.final_min_common)[0] == (s0,)


def test_seats_go_to_the_best_rivals_that_ran_enough_common_samples():
    state, env = _learned(RELEASED)
    rivals = []
    for rule, ran in ((LUCKY_RULE, 40), (BAD_RULES["U"], 40), (BAD_RULES["R"], 10)):
        state, cid = _candidate(state, state.current_text + "\n" + rule)
        state, _, _ = execute_groups(state, env, [(cid, IDS[:ran])], purpose=Purpose.FEEDBACK)
        rivals.append(cid)
    state = state.evolve(saved=tuple(rivals))
    seated, refused = seating(state, 1, 20)
    assert seated == (rivals[0],)  # the lucky rule loses least
    assert {r.candidate_id: (r.rule, r.common) for r in refused} == {
        rivals[1]: (SeatRule.SEATS, 40), rivals[2]: (SeatRule.COMMON, 10)}
    everyone, none = seating(state, None, 0)  # the paper: every saved candidate, no refusal
    assert set(everyone) == set(rivals) and none == ()


@pytest.mark.parametrize(("i2_round", "waits"), [(20, True), (10, False), (None, False)])
def test_early_stopping_waits_while_i2_submitted_in_the_previous_epoch(i2_round, waits):
    """Round 32 starts epoch 2; epoch 1 (rounds 16-31) accepted nothing."""
    for config in (RELEASED, RELEASED.replace(early_stopping=EarlyStopping())):
        state, env = _learned(config.replace(budget=100_000), ran=20)
        state = state.evolve(round=32, accepted_per_epoch=(1, 0), last_i2_submission=i2_round)
        expected = None if waits and config.early_stopping.unless_i2 else StopReason.EARLY_STOP
        assert stop_reason(state, env) is expected
        assert early_stop(state, env.config) == (True, expected is None)
        if expected is None:  # the round that goes on says why
            _, events = round_step(state, env, np.random.default_rng(0))
            assert _of(events, ev.EarlyStopWaived) == [
                ev.EarlyStopWaived(round=32, epoch=2, i2_round=20)]


def test_an_i2_submission_is_recorded_for_early_stopping():
    state, env = _learned(RELEASED, ran=20)
    state, _, _ = _evaluate(state.evolve(round=7), env, state.current_text + "\n" + LUCKY_RULE,
                            strategy=Strategy.I2)
    assert state.last_i2_submission == 7
    state, _, _ = _evaluate(state.evolve(round=9), env, "Answer with the word.")
    assert state.last_i2_submission == 7  # I1 leaves it
