"""Iter-CoT (paper App. "Baseline Settings"): every construction call is made by the target.

1. Each training sample is answered with zero-shot chain of thought under the initial skill,
   at the method's temperature (0.7 where the backend takes one): one execution each.
2. Wrong answers are revised in the same conversation, all still-wrong ones together per
   iteration, up to `max_revisions` iterations; one execution per revised sample per iteration.
   The loop stops early when an iteration corrects nothing.
3. A corrected conversation is summarised into one complete reasoning (a target call the
   budget does not count, `CallKind.SUMMARY`), kept only if its answer is still correct.
4. Exemplars drawn once (seeded) from the pool of kept summaries are appended to the initial
   skill; there is no validation-based selection. A zero-shot answer that was right at once is
   never an exemplar: the released pipeline saves only corrected answers for summarising
   (its first stage keeps the wrong answers alone). With no kept summary the final skill is
   the initial skill.

A task whose sample takes several calls (Mind2Web's steps) is revised call by call in the same
turn; its exemplar is the sample's input with the reasoning of its last call.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence

import attrs

from llm_cache.records import CallKind, Message, Request
from stratune_core.config.knobs import Config
from stratune_core.methods import iter_cot_events
from stratune_core.methods.entry import MethodEntry, MethodEstimate
from stratune_core.methods.executions import Run, execute
from stratune_core.methods.finish import finish
from stratune_core.methods.iter_cot_events import ExemplarsChosen, RevisionRound, SummaryChecked
from stratune_core.methods.iter_cot_prompts import (
    PROMPT_VERSION,
    SUMMARY,
    cot_skill,
    revise_turn,
    with_exemplars,
)
from stratune_core.methods.iter_cot_turns import answer, charge
from stratune_core.methods.splits import epoch_order
from stratune_core.methods.state import MethodState, start
from stratune_core.prompts.optimizer import BLANK_REPLY
from stratune_core.records.base import is_solved
from stratune_core.records.enums import StopReason
from stratune_core.records.llm import LLM
from stratune_core.records.method_spec import IterCotMethod, Method
from stratune_core.records.purposes import MethodPurpose
from stratune_core.records.task import Task
from stratune_core.state.context import Env
from stratune_core.state.events import Event
from stratune_core.state.state import round_rng

Step = tuple[MethodState, tuple[Event, ...]]
EXEMPLAR_STREAM = 9


def iterate(spec: IterCotMethod, config: Config, task: Task, llm: LLM) -> Iterator[Step]:
    env = Env.build(config, task, llm)
    state, opening = start(spec, config, task)
    state, added_cot, cot_id = _add(state, cot_skill(state.current_text))
    order = epoch_order(env.train_ids, config.seed, 0)[:state.budget.remaining]
    state, paid, runs = execute(state, env, cot_id, order, purpose=MethodPurpose.CONSTRUCTION,
                                edit=_sampling(spec))
    yield state, (*opening, *added_cot, *paid)
    runs = runs or ()
    pending = tuple(r for r in runs if not _solved(env, r))
    refused = False
    corrected: dict[str, Run] = {}
    for iteration in range(1, spec.max_revisions + 1):
        if not pending:
            break
        state = state.evolve(round=iteration)
        afford = pending[:state.budget.remaining]
        state, paid, _ = charge(state, cot_id, [r.sample.id for r in afford],
                                purpose=MethodPurpose.REVISION)
        refused = len(afford) < len(pending)
        if not afford:
            break
        turn = revise_turn(iteration)
        revised = answer(env, [r.sample for r in afford], [_continue(r, turn) for r in afford])
        fixed = tuple(r for r in revised if _solved(env, r))
        corrected.update((r.sample.id, r) for r in fixed)
        fixed_ids = {r.sample.id for r in fixed}
        pending = tuple(r for r in revised if r.sample.id not in fixed_ids)
        yield state, (*paid, RevisionRound(iteration=iteration,
                                           revised=[r.sample.id for r in afford],
                                           corrected=sorted(fixed_ids)))
        if not fixed or refused:
            break
    kept, checked = _summaries(env, [corrected[x] for x in order if x in corrected])
    pool = [(x, kept[x]) for x in order if x in kept]
    chosen = _draw(pool, spec.exemplars_for(task.info.name), config.seed)
    final_text = with_exemplars(state.text(state.current_id),
                                [(task.describe(env.samples[x]), text) for x, text in chosen])
    state, added, final_id = _add(state, final_text, parent=state.current_id)
    state = state.accept(final_id) if final_id != state.current_id else state
    events = (*checked, ExemplarsChosen(pool=len(pool), sample_ids=[x for x, _ in chosen]), *added)
    reason = StopReason.BUDGET if refused or len(order) < len(env.train_ids) else StopReason.COMPLETED
    state, done = finish(state, final_id, reason)
    yield state, (*events, *done)


def _add(state: MethodState, text: str,
         parent: str | None = None) -> tuple[MethodState, tuple[Event, ...], str]:
    state, sid, events = state.add_skill(text, parent or state.current_id)
    return state, events, sid


def _sampling(spec: IterCotMethod) -> Callable[[Request], Request]:
    def edit(request: Request) -> Request:
        return attrs.evolve(request, temperature=spec.temperature)

    return edit


def _solved(env: Env, run: Run) -> bool:
    return is_solved(run.score.value, env.threshold)


def _continue(run: Run, turn: str, kind: CallKind | None = None) -> tuple[Request, ...]:
    """Each of the run's calls continued by its answer and one more user turn."""
    out = []
    for request, response in zip(run.requests, run.responses, strict=True):
        said = response.text if response.text.strip() else BLANK_REPLY
        messages = (*request.messages, Message(role="assistant", content=said),
                    Message.user(turn))
        out.append(attrs.evolve(request, messages=messages, kind=kind or request.kind))
    return tuple(out)


def _summaries(env: Env, corrected: Sequence[Run]) -> tuple[dict[str, str], tuple[Event, ...]]:
    """One summary per corrected conversation (not counted in the budget), kept when its
    answer is still correct."""
    if not corrected:
        return {}, ()
    runs = answer(env, [r.sample for r in corrected],
                  [_continue(r, SUMMARY, CallKind.SUMMARY) for r in corrected])
    kept = {r.sample.id: _reasoning(r) for r in runs if _solved(env, r)}
    return kept, tuple(SummaryChecked(sample_id=r.sample.id, kept=r.sample.id in kept)
                       for r in runs)


def _reasoning(run: Run) -> str:
    return run.responses[-1].text.strip() if run.responses else ""


def _draw(pool: Sequence[tuple[str, str]], k: int, seed: int) -> list[tuple[str, str]]:
    """`k` exemplars drawn once without replacement, kept in pool order."""
    if len(pool) <= k:
        return list(pool)
    picked = round_rng(seed, -1, EXEMPLAR_STREAM).choice(len(pool), size=k, replace=False)
    return [pool[i] for i in sorted(int(i) for i in picked)]


def estimate(spec: IterCotMethod, n_train: int, budget: int) -> MethodEstimate:
    """Half the zero-shot answers assumed wrong, and revisions halving them each turn."""
    first = min(n_train, budget)
    wrong, revisions, turns = first / 2, 0.0, 0
    while wrong >= 1 and turns < spec.max_revisions:
        revisions, wrong, turns = revisions + wrong, wrong / 2, turns + 1
    counted = min(budget, first + math.ceil(revisions))
    return MethodEstimate(target_executions=counted, optimizer_calls=0,
                          uncounted_target_calls=math.ceil(first / 2 - wrong), steps=turns)


def fit(spec: IterCotMethod, takes_temperature: bool) -> IterCotMethod:
    """It samples at temperature 0.7 where the target takes a temperature; elsewhere it sends
    none, and the manifest's `temperature: null` records that."""
    if spec.temperature is not None and not takes_temperature:
        return attrs.evolve(spec, temperature=None)
    return spec


ENTRY = MethodEntry(
    method=Method.ITER_COT, spec=IterCotMethod, label="Iter-CoT", iterate=iterate,
    prompt_version=PROMPT_VERSION, estimate=estimate,
    minimum_budget=lambda spec, n: 1,  # its first answer
    fit=fit, events=iter_cot_events.VIEWS, target_writes="Iter-CoT's summaries",
)
