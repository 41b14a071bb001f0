"""The released code's round mechanisms on the toy world: each fires under
`--profile released` and each `Config` field turns its mechanism off, leaving the rest alone.
Warm-up, residual pooling and the affordability guards in detail; the feedback blocks are in
test_feedback_extras.py, the I2 window, the kept refinement and verified fixes in
test_released_i2.py."""

from __future__ import annotations

from collections import Counter

import pytest

import stratune_core.state.events as ev
from llm_cache.records import CallKind
from stratune_core.budget.admission import Budget
from stratune_core.budget.ledger import Ledger
from stratune_core.config.knobs import Config
from stratune_core.config.mechanisms import ResidualPooling, StrategyFloors, Warmup
from stratune_core.config.profiles import released
from stratune_core.feedback.execution import build_feedback, offered_examples
from stratune_core.records.base import Execution
from stratune_core.records.enums import Purpose, Strategy
from stratune_core.round.affordability import offered_strategies
from stratune_core.round.execute import execute_groups
from stratune_core.round.operator_choice import choose_operator
from stratune_core.round.residuals import pool_residuals
from stratune_core.round.run import run
from stratune_core.round.warmup import finish_warmup_round, in_warmup
from stratune_core.state.context import Env
from stratune_core.state.history import History, OperatorChoice
from stratune_core.state.state import initial_state, round_rng
from tests.support.mechanisms import CLOSING, CLOSING_A, NOT_IN_A
from tests.support.toy import InProcessLLM, ToyOptimizer, ToyTask

RELEASED = released().replace(seed=6, feedback_global_stats=True)
MECHANISMS = (ev.WarmupRound, ev.ResidualsPooled, ev.FeedbackExtended, ev.StrategiesNarrowed,
              ev.FixesAnnotated, ev.WindowSubmitted, ev.RefinementKept)


def _run(config: Config, task: ToyTask | None = None):
    llm = InProcessLLM()
    return run(config, task or ToyTask(), llm), llm


def _of(result, cls):
    return [e for e in result.events if isinstance(e, cls)]


def _prompts(llm, kind=CallKind.CANDIDATE_GENERATION) -> str:
    return "\n".join(r.messages[0].text() for r in llm.calls if r.kind is kind)


@pytest.fixture(scope="module")
def full():
    """The closing note's run A (docs/profiles.md, "The released profile"), in process."""
    llm = InProcessLLM(optimizer=ToyOptimizer(style=CLOSING_A.style))
    return run(CLOSING_A.config(), CLOSING_A.task(), llm), llm


def test_every_round_mechanism_fires_within_the_budget(full):
    """Run A fires all but the mechanisms it leaves to runs B and C (`NOT_IN_A`)."""
    result, _ = full
    counts = Counter(type(e) for e in result.events)
    for other in {CLOSING[name] for name in NOT_IN_A.values()}:
        shown = run(other.config(), other.task(),
                    InProcessLLM(optimizer=ToyOptimizer(style=other.style)))
        counts.update(type(e) for e in shown.events)
    assert all(counts[cls] >= 1 for cls in MECHANISMS), counts
    assert result.spent <= result.budget and result.spent == len(result.state.ledger)
    assert sum(e.new for e in _of(result, ev.ExecutionsCharged)) == result.spent


def test_the_paper_profile_emits_none_of_them():
    result, llm = _run(Config(seed=6))
    assert not [e for e in result.events if isinstance(e, MECHANISMS)]
    text = _prompts(llm) + _prompts(llm, CallKind.STRATEGY_SELECTION)
    for phrase in ("known failures of the skill on samples of earlier", "(contrast)",
                   "Since the initial skill", "multi-step", "VERIFIED FIX",
                   "Answer options across", "submission window"):
        assert phrase not in text


@pytest.mark.parametrize(("field", "event", "phrase"), [
    ("residual_pooling", ev.ResidualsPooled, "known failures of the skill on samples of earlier"),
    ("affordability_guards", ev.StrategiesNarrowed, None),
    ("verified_fixes", ev.FixesAnnotated, "VERIFIED FIX"),
    ("i2_window", ev.WindowSubmitted, None),
    ("keep_refinement_on_accept", ev.RefinementKept, None),
])
def test_each_field_turns_its_mechanism_off(field, event, phrase):
    result, llm = _run(RELEASED.replace(**{field: False}))
    assert not _of(result, event)
    if phrase is not None:
        assert phrase not in _prompts(llm)
    assert result.spent <= result.budget


# --- warm-up ---------------------------------------------------------------------------------

def test_warmup_rounds_only_run_s0_then_the_first_round_rule_applies(full):
    result, _ = full
    warm = _of(result, ev.WarmupRound)
    assert [w.round for w in warm] == list(range(len(warm)))
    assert [w.done for w in warm] == [False] * (len(warm) - 1) + [True]
    assert len(warm) == RELEASED.warmup.max_batches  # the toy's s0 solves too few samples
    first = _of(result, ev.OperatorChosen)[0]
    assert (first.round, first.strategy, first.source) == (len(warm), Strategy.I1, "first-round")
    generated = [e for e in result.events if isinstance(e, ev.CandidateGenerated | ev.FeedbackPrepared)]
    assert min(e.round for e in generated) >= len(warm)
    charged = [e for e in _of(result, ev.ExecutionsCharged) if e.round < len(warm)]
    assert {e.purpose for e in charged} == {"feedback"}  # through admission, batches only


def _warm_state(config: Config, solved: int):
    task = ToyTask()
    state = initial_state(config, task)
    ids = [s.id for s in task.split("train")]
    executions = [Execution(skill_id=state.current_id, sample_id=sid, score=float(i < solved),
                            solved=i < solved) for i, sid in enumerate(ids[:20])]
    return state.evolve(ledger=Ledger.of(executions))


def test_warmup_ends_once_enough_solved_samples_are_known():
    config = Config(warmup=Warmup(solved=5))
    state = _warm_state(config, solved=3).evolve(round=1, first_round=1)
    assert in_warmup(state, config)
    state = _warm_state(config, solved=5).evolve(round=1, first_round=1)
    assert not in_warmup(state, config)  # enough known: round 1 writes candidates
    state, event = finish_warmup_round(_warm_state(config, solved=5), config)
    assert event.done and event.solved_known == 5 and state.first_round == 1
    # the first batch always runs, and the warm-up never outlasts its batches
    assert in_warmup(_warm_state(config, solved=9), config)
    late = _warm_state(config, solved=0).evolve(round=6, first_round=6)
    assert not in_warmup(late, config)
    assert not in_warmup(_warm_state(Config(), solved=0), Config())  # off in the paper


# --- residual pooling ------------------------------------------------------------------------

def _pool_case(config: Config, continuous: bool = False):
    task = ToyTask(continuous=continuous)
    state = initial_state(config, task)
    env = Env.build(config, task, InProcessLLM())
    batch = state.batches[0]
    sid = state.current_id
    execs = [Execution(skill_id=sid, sample_id=x, score=1.0, solved=True) for x in batch[1:]]
    execs.append(Execution(skill_id=sid, sample_id=batch[0], score=0.0, solved=False,
                           summary="wrong"))
    others = [s.id for s in task.split("train") if s.id not in batch][:9]
    for k, x in enumerate(others):  # 0.0 / 0.5 alternate; the last two are solved
        score = 1.0 if k >= 7 else 0.5 * (k % 2)
        execs.append(Execution(skill_id=sid, sample_id=x, score=score, solved=score == 1.0))
    state = state.evolve(ledger=Ledger.of(execs))
    fb = build_feedback(task=task, skill_id=sid, batch_ids=batch, ledger=state.ledger,
                        samples=env.samples, max_failures=config.max_failures_shown,
                        max_examples=0, train_order=env.train_ids)
    return state, env, fb, others


def test_a_batch_with_few_failures_borrows_known_failures_from_the_ledger():
    config = Config(residual_pooling=True, max_failures_shown=5)
    state, env, fb, others = _pool_case(config)
    pooled, events = pool_residuals(state, env, fb)
    assert [f.sample_id for f in pooled.failures[:1]] == [fb.failures[0].sample_id]
    assert len(pooled.failures) == 5 and len(pooled.pooled) == 4  # up to max_failures_shown
    assert set(pooled.pooled) <= set(others[:7])  # known failures only, never the batch
    (event,) = events
    assert event.batch_failures == 1 and event.sample_ids == pooled.pooled
    assert set(pooled.pooled) <= pooled.shown_ids(examples=False)  # kept out of Q_s and Q_v
    again, _ = pool_residuals(state, env, fb)
    assert again == pooled  # a seeded order, no clock
    # the offered examples follow every failure shown, the pooled ones included
    assert pooled.examples and pooled.examples == offered_examples(
        task=env.task, skill_id=fb.skill_id, batch_ids=fb.batch_ids,
        failure_ids=[f.sample_id for f in pooled.failures], ledger=state.ledger,
        samples=env.samples, max_examples=config.max_solved_offered, train_order=env.train_ids)


def test_continuous_scores_nearest_to_solved_are_pooled_first():
    config = Config(residual_pooling=True, max_failures_shown=4)
    state, env, fb, others = _pool_case(config, continuous=True)
    pooled, _ = pool_residuals(state, env, fb)
    assert set(pooled.pooled) == {others[1], others[3], others[5]}  # the 0.5 scores


def test_pooling_waits_for_a_batch_with_few_failures_and_can_be_off():
    config = Config(residual_pooling=ResidualPooling(min_failures=1))
    state, env, fb, _ = _pool_case(config)
    assert pool_residuals(state, env, fb) == (fb, ())
    off = Config()
    state, env, fb, _ = _pool_case(off)
    assert pool_residuals(state, env, fb) == (fb, ())


# --- affordability guards --------------------------------------------------------------------

RANKING = len(initial_state(Config(), ToyTask()).ranking_ids)
I2_GUARD = 6 * 2 * RANKING  # six I2 rounds: a draft and s~ on the ranking subset
I3_GUARD = 6 * (Config().i3_k + 1) * RANKING  # six I3 rounds: K drafts and s_t


def _guard_state(config: Config, remaining: int, tried: tuple[Strategy, ...] = (Strategy.I1,)):
    state = initial_state(config, ToyTask())
    limit = 1000
    history = History()
    for r, strategy in enumerate(tried):
        history = history.add_choice(OperatorChoice(round=r, strategy=strategy, form=None))
    return state.evolve(budget=Budget(limit=limit, spent=limit - remaining), round=3,
                        history=history)


def test_the_guards_offer_i2_and_i3_only_while_six_rounds_of_ranking_are_affordable():
    config = Config(affordability_guards=True)
    for remaining, offered in ((I3_GUARD + 1, tuple(Strategy)), (I3_GUARD, (Strategy.I1, Strategy.I2)),
                               (I2_GUARD + 1, (Strategy.I1, Strategy.I2)), (I2_GUARD, (Strategy.I1,))):
        assert offered_strategies(_guard_state(config, remaining), config) == offered, remaining
    assert offered_strategies(_guard_state(config, 10), Config()) == tuple(Strategy)  # paper


def _choose(config: Config, remaining: int, tried: tuple[Strategy, ...] = (Strategy.I1,)):
    state = _guard_state(config, remaining, tried)
    task, llm = ToyTask(), InProcessLLM()
    env = Env.build(config, task, llm)
    batch = state.batches[3]
    state, _, _ = execute_groups(state, env, [(state.current_id, batch)], purpose=Purpose.FEEDBACK)
    fb = build_feedback(task=task, skill_id=state.current_id, batch_ids=batch,
                        ledger=state.ledger, samples=env.samples, max_failures=12,
                        max_examples=10, train_order=env.train_ids)
    _, events, choice = choose_operator(state.evolve(feedback=fb), env, round_rng(0, 3))
    return events, choice, llm


def test_a_narrowed_menu_is_recorded_and_only_i1_needs_no_selection_call():
    config = Config(affordability_guards=True)
    events, choice, llm = _choose(config, I2_GUARD + 10)  # the batch spends a few
    narrowed = [e for e in events if isinstance(e, ev.StrategiesNarrowed)]
    assert narrowed and narrowed[0].dropped == (Strategy.I3,)
    (request,) = [q for q in llm.calls if q.kind is CallKind.STRATEGY_SELECTION]
    assert '"strategy" (exactly one of "I1", "I2")' in request.messages[0].text()
    events, choice, llm = _choose(config, 10)
    assert choice.strategy is Strategy.I1 and choice.source == "affordability-guard"
    assert not [q for q in llm.calls if q.kind is CallKind.STRATEGY_SELECTION]
    assert isinstance(events[0], ev.StrategiesNarrowed)
    events, _, _ = _choose(Config(), 10)  # off: the whole menu, nothing recorded
    assert not [e for e in events if isinstance(e, ev.StrategiesNarrowed)]


def test_guards_leave_ablation_selectors_alone_and_narrow_the_floors():
    _, choice, _ = _choose(Config(affordability_guards=True, selector="fixed:I3"), 10)
    assert choice.strategy is Strategy.I3
    floors = Config(affordability_guards=True,
                    strategy_floors=StrategyFloors(i2_frac=0.0, i3_frac=0.0))
    tried = (Strategy.I1, Strategy.I2)  # the I3 floor is due
    _, choice, _ = _choose(floors, I3_GUARD + 10, tried)
    assert (choice.strategy, choice.source) == (Strategy.I3, "strategy-floor")
    _, choice, _ = _choose(floors, I2_GUARD + 10, tried)  # I3 unaffordable: the floor waits
    assert choice.strategy is not Strategy.I3 and choice.source != "strategy-floor"
