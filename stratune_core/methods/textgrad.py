"""TextGrad (paper App. "Baseline Settings"): textual-gradient updates of the skill on
minibatches of 3 training samples; each update is scored on the internal validation split (20%
of train) and reverted if that score drops. Runs until the next step cannot be paid in full.

A step: the current skill on the minibatch (ledger reuse); per execution two gradient calls,
as TextGrad's backward pass makes them in its released prompt-optimization example (through the
evaluation, then through the model call to the skill); one update call that applies the
skill's gradients; the updated skill on the validation split. A step is started only if its
worst case (the minibatch plus a full validation) fits in the budget; gradient and update calls
are optimizer calls, which B does not count.

An update reply without the opening tag ends the run with the current skill: TextGrad's
optimizer raises on such a reply, and its example does not catch it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from llm_cache.records import CallKind
from stratune_core.config.knobs import Config
from stratune_core.methods.entry import (
    ROUNDS,
    SHARED_SETTINGS,
    MethodEntry,
    MethodEstimate,
    smallest_budget,
    validation_size,
)
from stratune_core.methods.executions import execute, scored
from stratune_core.methods.finish import finish
from stratune_core.methods.opening import open_with_validation
from stratune_core.methods.splits import chunks, epoch_order
from stratune_core.methods.state import MethodState
from stratune_core.methods.textgrad_prompts import (
    GRADIENT_SYSTEM,
    OUTPUT_SYSTEM,
    PROMPT_VERSION,
    SKILL_TAG,
    UPDATE_SYSTEM,
    gradient_prompt,
    output_prompt,
    update_prompt,
)
from stratune_core.methods.textgrad_reply import opened_block
from stratune_core.methods.trajectories import render, render_call
from stratune_core.prompts.optimizer import ask, optimizer_request
from stratune_core.records.base import Execution
from stratune_core.records.enums import StopReason
from stratune_core.records.llm import LLM
from stratune_core.records.method_events import UpdateDecided
from stratune_core.records.method_spec import Method, TextGradMethod
from stratune_core.records.purposes import MethodPurpose, UpdateVerdict
from stratune_core.records.task import Task
from stratune_core.state.context import Env
from stratune_core.state.events import Event

Step = tuple[MethodState, tuple[Event, ...]]


def iterate(spec: TextGradMethod, config: Config, task: Task, llm: LLM) -> Iterator[Step]:
    env = Env.build(config, task, llm)
    opened = open_with_validation(spec, spec.validation_frac, config, task, env)
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
            state, events, best, reason = _step(state, env, batch, val, best)
            yield state, events
            if reason is not None:
                break
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
          best: float) -> tuple[MethodState, tuple[Event, ...], float, StopReason | None]:
    parent = state.current_id
    skill = state.current_text
    state, events, _ = execute(state, env, parent, batch, purpose=MethodPurpose.ROLLOUT)
    out: list[Event] = list(events)
    step_round = state.round
    reply = ask(env, [optimizer_request(env, update_prompt(skill, _gradients(env, skill, [
        e for e in (state.ledger.get(parent, x) for x in batch) if e is not None])),
        kind=CallKind.SKILL_UPDATE, system=UPDATE_SYSTEM)])[0]
    text, closed = opened_block(reply, SKILL_TAG)
    if text is None or text == skill:
        untagged = f"<{SKILL_TAG}>" not in reply
        verdict = UpdateVerdict.UNUSABLE if text is None else UpdateVerdict.UNCHANGED
        detail = (f"no <{SKILL_TAG}> tag in the reply: the run ends" if untagged else
                  f"nothing after <{SKILL_TAG}>" if text is None else "")
        out.append(UpdateDecided(round=step_round, parent_id=parent, candidate_id=None,
                                 verdict=verdict, reference_score=best, detail=detail))
        stop = StopReason.NO_USABLE_CANDIDATES if untagged else None
        return state.evolve(round=step_round + 1), tuple(out), best, stop
    state, candidate, added = state.add_skill(text, parent)
    out.extend(added)
    state, paid, runs = execute(state, env, candidate, val, purpose=MethodPurpose.VALIDATION)
    out.extend(paid)
    if runs is None:  # cannot happen after `_unaffordable`; kept as a refusal, not a crash
        out.append(UpdateDecided(round=step_round, parent_id=parent, candidate_id=candidate,
                                 verdict=UpdateVerdict.UNAFFORDABLE, reference_score=best))
        return state.evolve(round=step_round + 1), tuple(out), best, None
    score, seen = scored(state, env, candidate, val, purpose=MethodPurpose.VALIDATION)
    out.append(seen)
    kept = score >= best - 1e-12  # reverted only when the validation score drops
    out.append(UpdateDecided(round=step_round, parent_id=parent, candidate_id=candidate,
                             verdict=UpdateVerdict.KEPT if kept else UpdateVerdict.REVERTED,
                             score=score, reference_score=best,
                             detail="" if closed else f"no </{SKILL_TAG}>: read to the end of the reply"))
    if kept:
        state = state.accept(candidate)
    return state.evolve(round=step_round + 1), tuple(out), score if kept else best, None


def _gradients(env: Env, skill: str, executions: Sequence[Execution]) -> list[str]:
    """The skill's gradients, one per execution: the output's feedback through the evaluation
    first, then the skill's through the model call (it needs the first as its input)."""
    on_outputs = ask(env, [optimizer_request(env, output_prompt(render(env, e)),
                                             kind=CallKind.REFLECTION, system=OUTPUT_SYSTEM)
                           for e in executions])
    return ask(env, [optimizer_request(env, gradient_prompt(skill, render_call(env, e), f),
                                       kind=CallKind.REFLECTION, system=GRADIENT_SYSTEM)
                     for e, f in zip(executions, on_outputs, strict=True)])


def estimate(spec: TextGradMethod, n_train: int, budget: int) -> MethodEstimate:
    """Steps of a minibatch and a full validation each, two gradient calls per sample."""
    val = validation_size(spec.validation_frac, n_train)
    steps = max(0, (budget - val) // (spec.minibatch + val)) if val else 0
    return MethodEstimate(target_executions=min(budget, val + steps * (spec.minibatch + val)),
                          optimizer_calls=steps * (2 * spec.minibatch + 1), steps=steps)


ENTRY = MethodEntry(
    method=Method.TEXTGRAD, spec=TextGradMethod, label="TextGrad", iterate=iterate,
    prompt_version=PROMPT_VERSION, estimate=estimate,
    minimum_budget=lambda spec, n: smallest_budget(estimate, spec, n),
    config_fields=SHARED_SETTINGS | ROUNDS,
    stop_notes=((StopReason.NO_USABLE_CANDIDATES,
                 "an update reply had no opening tag, which ends the run as TextGrad's released "
                 "optimizer does (a stronger optimizer model)"),),
)
