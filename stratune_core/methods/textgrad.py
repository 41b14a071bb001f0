"""TextGrad (paper App. "Baseline Settings"): textual-gradient updates of the skill on
minibatches of 3 training samples; each update is scored on the internal validation split (20%
of train) and reverted if that score drops. Runs until the next step cannot be paid in full.

A step: the current skill on the minibatch (ledger reuse), one gradient call per execution,
one update call that applies them, and the updated skill on the validation split. A step is
started only if its worst case (the minibatch plus a full validation) fits in the budget.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from llm_cache.records import CallKind
from stratune_core.config.knobs import Config
from stratune_core.methods.executions import execute, scored
from stratune_core.methods.finish import finish
from stratune_core.methods.opening import open_with_validation
from stratune_core.methods.replies import opened_block
from stratune_core.methods.splits import chunks, epoch_order
from stratune_core.methods.state import MethodState
from stratune_core.methods.textgrad_prompts import (
    GRADIENT_SYSTEM,
    SKILL_TAG,
    UPDATE_SYSTEM,
    gradient_prompt,
    update_prompt,
)
from stratune_core.methods.trajectories import render
from stratune_core.prompts.optimizer import ask, optimizer_request
from stratune_core.records.enums import StopReason
from stratune_core.records.llm import LLM
from stratune_core.records.method_events import UpdateDecided
from stratune_core.records.method_spec import TextGradMethod
from stratune_core.records.purposes import MethodPurpose, UpdateVerdict
from stratune_core.records.task import Task
from stratune_core.state.context import Env
from stratune_core.state.events import Event

Step = tuple[MethodState, tuple[Event, ...]]


def iterate(spec: TextGradMethod, config: Config, task: Task, llm: LLM) -> Iterator[Step]:
    env = Env.build(config, task, llm)
    opened = open_with_validation(spec, config, task, env)
    yield opened.state, opened.events
    if opened.score is None:
        return
    state, fit, val, best = opened.state, opened.fit, opened.validation, opened.score
    reason, epoch = _max_rounds(state, config), 0
    while reason is None:
        spent_before = state.budget.spent
        for batch in chunks(epoch_order(fit, config.seed, epoch), spec.minibatch):
            reason = _max_rounds(state, config) or _unaffordable(state, batch, val)
            if reason is not None:
                break
            state, events, best = _step(state, env, batch, val, best)
            yield state, events
        epoch += 1
        if reason is None and state.budget.spent == spent_before:
            reason = StopReason.NO_PROGRESS  # an epoch of updates that changed nothing
    state, done = finish(state, state.current_id, reason)
    yield state, done


def _max_rounds(state: MethodState, config: Config) -> StopReason | None:
    if config.max_rounds is not None and state.round >= config.max_rounds:
        return StopReason.MAX_ROUNDS
    return None


def _unaffordable(state: MethodState, batch: Sequence[str], val: Sequence[str]) -> StopReason | None:
    need = len(state.ledger.missing(state.current_id, batch)) + len(val)
    return None if state.budget.fits(need) else StopReason.BUDGET


def _step(state: MethodState, env: Env, batch: Sequence[str], val: Sequence[str],
          best: float) -> tuple[MethodState, tuple[Event, ...], float]:
    parent = state.current_id
    skill = state.current_text
    state, events, _ = execute(state, env, parent, batch, purpose=MethodPurpose.ROLLOUT)
    out: list[Event] = list(events)
    executions = [state.ledger.get(parent, x) for x in batch]
    gradients = ask(env, [optimizer_request(env, gradient_prompt(skill, render(env, e)),
                                            kind=CallKind.REFLECTION, system=GRADIENT_SYSTEM)
                          for e in executions if e is not None])
    reply = ask(env, [optimizer_request(env, update_prompt(skill, gradients),
                                        kind=CallKind.SKILL_UPDATE, system=UPDATE_SYSTEM)])[0]
    text, closed = opened_block(reply, SKILL_TAG)
    step_round = state.round
    if text is None or text == skill:
        verdict = UpdateVerdict.UNUSABLE if text is None else UpdateVerdict.UNCHANGED
        detail = f"no <{SKILL_TAG}> tag in the reply" if text is None else ""
        out.append(UpdateDecided(round=step_round, parent_id=parent, candidate_id=None,
                                 verdict=verdict, reference_score=best, detail=detail))
        return state.evolve(round=step_round + 1), tuple(out), best
    state, candidate, added = state.add_skill(text, parent)
    out.extend(added)
    state, paid, runs = execute(state, env, candidate, val, purpose=MethodPurpose.VALIDATION)
    out.extend(paid)
    if runs is None:  # cannot happen after `_unaffordable`; kept as a refusal, not a crash
        out.append(UpdateDecided(round=step_round, parent_id=parent, candidate_id=candidate,
                                 verdict=UpdateVerdict.UNAFFORDABLE, reference_score=best))
        return state.evolve(round=step_round + 1), tuple(out), best
    score, seen = scored(state, env, candidate, val, purpose=MethodPurpose.VALIDATION)
    out.append(seen)
    kept = score >= best - 1e-12  # reverted only when the validation score drops
    out.append(UpdateDecided(round=step_round, parent_id=parent, candidate_id=candidate,
                             verdict=UpdateVerdict.KEPT if kept else UpdateVerdict.REVERTED,
                             score=score, reference_score=best,
                             detail="" if closed else f"no </{SKILL_TAG}>: read to the end of the reply"))
    if kept:
        state = state.accept(candidate)
    return state.evolve(round=step_round + 1), tuple(out), score if kept else best
