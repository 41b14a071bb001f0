"""Every baseline, whatever the seed, training-set size, budget and optimizer habits: spending
never passes B at any step, every unit spent is attributed to a sample and a purpose in a
`TargetExecuted` event, a charged pair is never charged twice, and the run always ends with
`RunFinished` naming a skill of the run; Table 4's hybrids keep StraTune's accounting."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import stratune_core.state.events as ev
from stratune_core.config.knobs import Config
from stratune_core.records.method_spec import (
    Generator,
    GepaMethod,
    IterCotMethod,
    SkillOptMethod,
    StraTuneMethod,
    TextGradMethod,
    Trace2SkillMethod,
)
from stratune_core.records.purposes import MethodPurpose
from stratune_core.round.registry import iterate_method
from tests.support.toy import InProcessLLM, ToyTask
from tests.support.toy_methods import MethodOptimizer, method_target, unattributed

SPECS = st.one_of(
    st.builds(TextGradMethod, minibatch=st.integers(1, 5),
              validation_frac=st.sampled_from([0.1, 0.2, 0.4])),
    st.builds(IterCotMethod, max_revisions=st.integers(1, 6),
              exemplars=st.one_of(st.none(), st.integers(1, 8))),
    st.builds(SkillOptMethod, batch=st.integers(4, 40), minibatch=st.integers(2, 8),
              epochs=st.integers(1, 4), slow_update_samples=st.integers(2, 20)),
    st.builds(Trace2SkillMethod, seeds=st.sampled_from([(41,), (41, 42, 43)]),
              group_size=st.integers(2, 10)),
    st.builds(GepaMethod, minibatch=st.integers(1, 5),
              validation_frac=st.sampled_from([0.1, 0.2, 0.4]),
              candidate_selection=st.sampled_from(["pareto", "current_best"])),
)


@settings(max_examples=40, deadline=None)
@given(
    spec=SPECS,
    seed=st.integers(0, 10_000),
    n_train=st.integers(2, 40),
    budget=st.one_of(st.none(), st.integers(1, 120)),
    mixed=st.booleans(),
    continuous=st.booleans(),
)
def test_budget_never_passed_and_every_execution_attributed(spec, seed, n_train, budget, mixed,
                                                            continuous):
    config = Config(seed=seed, budget=budget, max_rounds=30)
    task = ToyTask(n_train=n_train, continuous=continuous)
    llm = InProcessLLM(target=method_target, optimizer=MethodOptimizer(mixed=mixed))
    events: list = []
    skills: set[str] = set()
    for state, evs in iterate_method(spec, config, task, llm):
        events.extend(evs)
        assert 0 <= state.budget.spent <= state.budget.limit
        skills.update(e.skill_id for e in evs if isinstance(e, ev.SkillAdded))
    limit = config.budget_for(n_train)
    assert unattributed(events, limit) is None
    assert events[-1].final_id in skills
    pairs = [(e.skill_id, x) for e in events if isinstance(e, ev.TargetExecuted)
             and e.purpose is not MethodPurpose.REVISION for x in e.sample_ids]
    assert len(pairs) == len(set(pairs))  # the ledger: a (skill, sample) pair is paid once
    train = {s.id for s in task.split("train")}
    assert all(x in train for e in events if isinstance(e, ev.TargetExecuted)
               for x in e.sample_ids)


@settings(max_examples=100, deadline=None)
@given(spec=SPECS, n_train=st.integers(2, 2000), budget=st.integers(1, 12_000))
def test_plan_estimates_stay_within_the_budget(spec, n_train, budget):
    from stratune_core.round.registry import entry_of

    estimate = entry_of(spec).estimate
    assert estimate is not None
    guess = estimate(spec, n_train, budget)
    assert 0 <= guess.target_executions <= budget
    assert guess.optimizer_calls >= 0 and guess.uncounted_target_calls >= 0


@settings(max_examples=12, deadline=None)
@given(
    generator=st.sampled_from(list(Generator)),
    seed=st.integers(0, 10_000),
    n_train=st.integers(12, 48),
    extra=st.one_of(st.none(), st.integers(0, 90)),
    mixed=st.booleans(),
)
def test_a_hybrid_stays_within_the_budget_and_changes_skill_only_by_acceptance(
    generator, seed, n_train, extra, mixed
):
    """Table 4's hybrids: StraTune's accounting (spent <= B, one unit per distinct pair), every
    candidate a child of the current skill, the current skill replaced only by an accepted
    candidate, the final skill current or saved. B: 6x, or `extra` above one round's cost
    (StraTune refuses less before anything is spent)."""
    from stratune_core.config.shape import run_shape
    from stratune_core.records.enums import Verdict

    one_round = run_shape(Config(seed=seed), n_train).smallest_budget(1)
    budget = None if extra is None else one_round + extra
    config = Config(seed=seed, budget=budget, max_rounds=12)
    llm = InProcessLLM(target=method_target, optimizer=MethodOptimizer(mixed=mixed))
    events: list = []
    state = None
    for state, evs in iterate_method(StraTuneMethod(generator=generator), config,
                                     ToyTask(n_train=n_train), llm):
        events.extend(evs)
        assert 0 <= state.budget.spent <= state.budget.limit
    assert state is not None
    assert state.budget.spent == len(state.ledger)
    decided = {e.candidate_id: e.verdict for e in events if isinstance(e, ev.CandidateDecided)}
    current = events[0].initial_skill_id
    for e in events:
        if isinstance(e, ev.CandidateGenerated):
            assert e.parent_id == current
        elif isinstance(e, ev.SkillReplaced):
            assert e.previous_id == current and decided[e.current_id] is Verdict.ACCEPTED
            current = e.current_id
    assert events[-1].final_id in {current, *state.saved}
