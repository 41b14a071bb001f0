"""GEPA (paper App. "Baseline Settings") through the `gepa` package: one editable component
(the skill, sent as the target's system prompt), Pareto candidate selection, reflection
minibatches of 3, merge off, the train split 80/20 into GEPA's trainset (generation) and
valset (internal validation). GEPA's metric-call budget is B and our ledger refuses any
execution that would pass it; the final skill is GEPA's best: the pool's highest internal
validation score, the earliest on a tie.

GEPA's loop cannot be resumed mid-run without its own state files, so the whole loop runs
inside one step and its iterations are yielded when it returns. A killed run reruns it from
the start: seeded by the run's seed and answered by the cache, it makes the same calls in
the same order and yields the same events.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from stratune_core.config.knobs import Config
from stratune_core.methods import gepa_events, gepa_hybrid
from stratune_core.methods.entry import (
    ROUNDS,
    SHARED_SETTINGS,
    MethodEntry,
    MethodEstimate,
    smallest_budget,
    validation_size,
)
from stratune_core.methods.finish import finish
from stratune_core.methods.gepa_adapter import Bridge, BudgetSpent, require_gepa
from stratune_core.methods.gepa_prompts import COMPONENT, PROMPT_VERSION
from stratune_core.methods.splits import split_fit_validation
from stratune_core.methods.state import MethodState, start
from stratune_core.records.enums import StopReason
from stratune_core.records.llm import LLM
from stratune_core.records.method_events import FinalChosen, SplitMade
from stratune_core.records.method_spec import GepaMethod, Method
from stratune_core.records.task import Task
from stratune_core.state.context import Env
from stratune_core.state.events import Event

Step = tuple[MethodState, tuple[Event, ...]]


class _Quiet:
    """GEPA's logger: its messages carry nothing the events do not, so they are dropped."""

    def log(self, message: str) -> None:
        del message


def iterate(spec: GepaMethod, config: Config, task: Task, llm: LLM) -> Iterator[Step]:
    gepa = require_gepa()
    env = Env.build(config, task, llm)
    state, opening = start(spec, config, task)
    fit, val = split_fit_validation(env.train_ids, spec.validation_frac, config.seed)
    yield state, (*opening, SplitMade(fit_ids=fit, validation_ids=val))
    bridge = Bridge(env=env, state=state, fit=fit, validation=val,
                    idle_limit=math.ceil(len(fit) / spec.minibatch), max_rounds=config.max_rounds)
    try:
        gepa.optimize(
            seed_candidate={COMPONENT: state.current_text}, trainset=list(fit), valset=list(val),
            adapter=bridge, reflection_lm=bridge, candidate_selection_strategy=spec.candidate_selection,
            reflection_minibatch_size=spec.minibatch, use_merge=spec.use_merge,
            max_metric_calls=state.budget.limit, stop_callbacks=bridge.should_stop,
            callbacks=[bridge], logger=_Quiet(), seed=config.seed, track_best_outputs=False,
            display_progress_bar=False, raise_on_exception=True)
        if bridge.failure is not None:
            raise bridge.failure
    except BudgetSpent:
        pass  # a refused group: B is spent as far as GEPA's next step goes
    reason = bridge.stop_reason() or StopReason.BUDGET  # else: GEPA's metric calls reached B
    for chunk in bridge.chunks:
        yield chunk.state, tuple(chunk.events)
    state = bridge.state
    tail: list[Event] = list(bridge.pending)
    final = state.current_id  # the initial skill, when B could not pay for its validation
    if bridge.pool:
        pool = tuple(bridge.pool)
        scores = tuple(_mean(state, s, val) for s in pool)
        final = pool[max(range(len(pool)), key=lambda i: (scores[i], -i))]
        tail.append(FinalChosen(skill_ids=pool, scores=scores, final_id=final))
    if final != state.current_id:
        state = state.accept(final)
    state, done = finish(state, final, reason)
    yield state, (*tail, *done)


def _mean(state: MethodState, skill_id: str, ids: tuple[str, ...]) -> float:
    scores = state.ledger.scores(skill_id, ids)
    return sum(scores) / len(scores) if scores else 0.0


def estimate(spec: GepaMethod, n_train: int, budget: int) -> MethodEstimate:
    """An iteration: the parent and the proposal on a minibatch and one reflection, assumed
    accepted one time in two and then validated in full."""
    val = validation_size(spec.validation_frac, n_train)
    per = 2 * spec.minibatch + math.ceil(val / 2)
    steps = max(0, (budget - val) // per) if val <= budget else 0
    return MethodEstimate(target_executions=min(budget, val + steps * per),
                          optimizer_calls=steps, steps=steps)


# GEPA's optimize loop (--method gepa) and its proposal step (--generator gepa) run the `gepa`
# package: a run records its version, and `replay` names it when it differs
ENTRY = MethodEntry(
    method=Method.GEPA, spec=GepaMethod, label="GEPA", iterate=iterate,
    prompt_version=PROMPT_VERSION, estimate=estimate,
    minimum_budget=lambda spec, n: smallest_budget(estimate, spec, n),
    config_fields=SHARED_SETTINGS | ROUNDS, packages=("gepa",),
    hybrid="GEPA with StraTune evaluation", propose=gepa_hybrid.propose, events=gepa_events.VIEWS,
)
