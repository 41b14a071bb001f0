"""Properties of whole runs over random scripted-model behaviours."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import stratune_core.state.events as ev
from stratune_core.config.knobs import Config
from stratune_core.records.enums import Verdict
from stratune_core.round.run import run
from tests.support.toy import InProcessLLM, ToyOptimizer, ToyTask

plans = st.lists(st.sampled_from(["I1", "I2", "I3"]), min_size=1, max_size=3, unique=True)
form_plans = st.lists(
    st.sampled_from(["F1", "F2", "F3", "F4"]), min_size=1, max_size=4, unique=True
)


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    style=st.sampled_from(["good", "mixed"]),
    plan=plans,
    forms=form_plans,
    n_train=st.integers(20, 60),
    selector=st.sampled_from(["llm", "rotation", "random", "bandit:ucb1"]),
    validation=st.booleans(),
)
def test_runs_end_within_budget_and_change_skill_only_by_acceptance(
    seed, style, plan, forms, n_train, selector, validation
):
    """Any run ends; spent <= B and equals distinct pairs; the current skill changes only through
    an accepted candidate; the final skill was current or saved."""
    optimizer = ToyOptimizer(style=style, strategy_plan=tuple(plan), form_plan=tuple(forms))
    config = Config(seed=seed, selector=selector, validation=validation)
    result = run(config, ToyTask(n_train=n_train), InProcessLLM(optimizer=optimizer))
    assert result.spent <= result.budget
    assert result.spent == len(result.state.ledger)
    decided = {
        e.candidate_id: e.verdict for e in result.events if isinstance(e, ev.CandidateDecided)
    }
    current = next(e for e in result.events if isinstance(e, ev.RunStarted)).initial_skill_id
    currents = {current}
    for e in result.events:
        if isinstance(e, ev.SkillReplaced):
            assert e.previous_id == current
            assert decided[e.current_id] is Verdict.ACCEPTED
            current = e.current_id
            currents.add(current)
    assert result.state.current_id == current
    assert result.final_id in {current, *result.state.saved}


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), style=st.sampled_from(["good", "mixed", "trade"]),
       plan=plans, n_train=st.integers(20, 48))
def test_every_event_of_a_run_round_trips_through_its_trace_line(seed, style, plan, n_train):
    """What a trace stores is enough to rebuild each event exactly, whatever the run did."""
    from replay.rundir.serde import event_from_line, event_to_line

    optimizer = ToyOptimizer(style=style, strategy_plan=tuple(plan))
    result = run(Config(seed=seed), ToyTask(n_train=n_train), InProcessLLM(optimizer=optimizer))
    texts = {e.skill_id: e.text for e in result.events if isinstance(e, ev.SkillAdded)}
    for event in result.events:
        line = event_to_line(event)
        assert event_from_line(line, texts.__getitem__) == event


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), style=st.sampled_from(["good", "mixed", "trade"]),
       plan=plans, n_train=st.integers(20, 60), stats=st.booleans())
def test_released_runs_keep_the_budget_and_replay_exactly(seed, style, plan, n_train, stats):
    """Under the released profile (warm-up, residual pooling, the I2 window and the rest of its
    round mechanisms), spent <= B and equals distinct pairs, every execution is charged once,
    a second run gives the same events, and every event survives its trace line."""
    from replay.rundir.serde import event_from_line, event_to_line
    from stratune_core.config.profiles import released

    def once():
        optimizer = ToyOptimizer(style=style, strategy_plan=tuple(plan))
        config = released().replace(seed=seed, feedback_global_stats=stats)
        return run(config, ToyTask(n_train=n_train), InProcessLLM(optimizer=optimizer))

    result = once()
    assert result.spent <= result.budget
    assert result.spent == len(result.state.ledger)
    assert sum(e.new for e in result.events if isinstance(e, ev.ExecutionsCharged)) == result.spent
    assert once().events == result.events
    texts = {e.skill_id: e.text for e in result.events if isinstance(e, ev.SkillAdded)}
    for event in result.events:
        assert event_from_line(event_to_line(event), texts.__getitem__) == event
