"""SkillOpt (paper App. "Baseline Settings"; the released trainer's loop, microsoft/SkillOpt
`skillopt/engine/trainer.py` with `configs/_base_/default.yaml`, where the paper is silent):
epochs over the fit split (2/3 of train; the rest is the selection split) in batches of 40.

A step: the current skill on the batch; one analyst call per minibatch of 8 failures or 8
successes (with the meta guidance); failure and success proposals merged apart, then
failure-first; as many applied as the cosine schedule allows (4 -> 2 over the planned steps,
advanced only by steps that had proposals, as the released scheduler is stepped only then);
the result kept only if it scores strictly higher on the selection split.

Every epoch end from the second epoch on (the released default: slow update and meta guidance
on, the slow update not gated on the selection split): the previous epoch's skill and the
current one on the same samples; the slow update writes guidance into the skill's protected
section and the current skill takes it without a validation; the meta guidance is rewritten for
the next epoch's optimizer calls (empty when the reply holds none). Both run whether or not the
epoch changed the skill.

A step is started only if its batch and a whole selection split fit in the budget; an epoch
end only if its two rollouts fit. The run ends after its epochs or when the next step does not
fit. The final skill is the best on the selection split; the last skill, when a slow update
made it differ, replaces it if it scores strictly higher there (as the released trainer
promotes it), when that validation fits.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from llm_cache.records import CallKind
from stratune_core.config.knobs import Config
from stratune_core.methods import skillopt_events, skillopt_hybrid
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
from stratune_core.methods.replies import last_block
from stratune_core.methods.skillopt_edits import edit_limit, gate
from stratune_core.methods.skillopt_events import EditsSelected, EpochReviewed
from stratune_core.methods.skillopt_guidance import guidance_of, with_guidance
from stratune_core.methods.skillopt_prompts import (
    GUIDANCE_TAG,
    META_SYSTEM,
    PROMPT_VERSION,
    SLOW_SYSTEM,
    SLOW_TAG,
    meta_prompt,
    slow_prompt,
)
from stratune_core.methods.skillopt_step import propose_edits
from stratune_core.methods.splits import chunks, epoch_order, steps_in
from stratune_core.methods.state import MethodState
from stratune_core.methods.trajectories import render
from stratune_core.prompts.optimizer import ask, optimizer_request
from stratune_core.records.enums import StopReason
from stratune_core.records.llm import LLM
from stratune_core.records.method_events import UpdateDecided
from stratune_core.records.method_spec import Method, SkillOptMethod
from stratune_core.records.purposes import MethodPurpose, UpdateVerdict
from stratune_core.records.task import Task
from stratune_core.state.context import Env
from stratune_core.state.events import Event

Step = tuple[MethodState, tuple[Event, ...]]
LONGITUDINAL_EPOCH = 1000  # the slow update's sample order: a stream apart from the epochs'
SLOW_DETAIL = "slow update: taken without validation"


def iterate(spec: SkillOptMethod, config: Config, task: Task, llm: LLM) -> Iterator[Step]:
    env = Env.build(config, task, llm)
    opened = open_with_validation(spec, spec.validation_frac, config, task, env)
    yield opened.state, opened.events
    if opened.score is None:
        return
    state, fit, val, best = opened.state, opened.fit, opened.validation, opened.score
    total = spec.epochs * steps_in(len(fit), spec.batch)
    meta, reason, scheduled, best_id = "", None, 0, state.current_id
    for epoch in range(spec.epochs):
        state = state.evolve(accepted_per_epoch=(*state.accepted_per_epoch, 0)) if epoch else state
        previous = state.current_id
        verdicts: list[UpdateVerdict] = []
        for batch in chunks(epoch_order(fit, config.seed, epoch), spec.batch):
            reason = _stop(state, config, batch, val)
            if reason is not None:
                break
            limit = edit_limit(spec.edits_start, spec.edits_end, scheduled + 1, total)
            state, events, best = _step(state, env, spec, batch, val, best, limit, meta)
            decided = [e.verdict for e in events if isinstance(e, UpdateDecided)]
            verdicts += decided
            best_id = state.current_id if UpdateVerdict.KEPT in decided else best_id
            scheduled += any(isinstance(e, EditsSelected) and e.proposed for e in events)
            state = state.evolve(round=state.round + 1)
            yield state, events
        if reason is not None:
            break
        if epoch >= 1:
            state, events, meta = _epoch_end(state, env, spec, epoch, previous, fit, best, meta,
                                             verdicts)
            state = state.evolve(round=state.round + 1) if events else state
            yield state, events
    state, events, final_id = _final(state, env, val, best, best_id)
    state, done = finish(state, final_id, reason or StopReason.COMPLETED)
    yield state, (*events, *done)


def _stop(state: MethodState, config: Config, batch: Sequence[str],
          val: Sequence[str]) -> StopReason | None:
    if config.max_rounds is not None and state.round >= config.max_rounds:
        return StopReason.MAX_ROUNDS
    need = len(state.ledger.missing(state.current_id, batch)) + len(val)
    return None if state.budget.fits(need) else StopReason.BUDGET


def _step(state: MethodState, env: Env, spec: SkillOptMethod, batch: Sequence[str],
          val: Sequence[str], best: float, limit: int,
          meta: str) -> tuple[MethodState, tuple[Event, ...], float]:
    parent, skill = state.current_id, state.current_text
    state, paid, _ = execute(state, env, parent, batch, purpose=MethodPurpose.ROLLOUT)
    executions = [e for e in (state.ledger.get(parent, x) for x in batch) if e is not None]
    made = propose_edits(env, skill, executions, minibatch=spec.minibatch,
                         merge_group=spec.merge_group, limit=limit, meta=meta)
    selected = EditsSelected(round=state.round, proposed=made.proposed, merged=made.merged,
                             limit=limit, applied=made.applied)
    if made.applied == 0:
        return state, (*paid, selected, UpdateDecided(
            round=state.round, parent_id=parent, candidate_id=None,
            verdict=UpdateVerdict.UNUSABLE, reference_score=best,
            detail="no applicable edit")), best
    state, gated, best = gate(state, env, parent, made.text, val, best)
    return state, (*paid, selected, *gated), best


def _epoch_end(state: MethodState, env: Env, spec: SkillOptMethod, epoch: int, previous: str,
               fit: Sequence[str], best: float, meta: str, verdicts: Sequence[UpdateVerdict],
               ) -> tuple[MethodState, tuple[Event, ...], str]:
    """The slow update and the meta guidance, from the previous epoch's skill and the current
    one on the same samples; skipped when those two rollouts do not fit in the budget."""
    current = state.current_id
    ids = epoch_order(fit, env.config.seed, LONGITUDINAL_EPOCH + epoch)[:spec.slow_update_samples]
    need = len(state.ledger.missing(previous, ids)) + len(state.ledger.missing(current, ids))
    if not state.budget.fits(need):
        return state, (), meta
    out: list[Event] = []
    for skill_id in (previous, current):
        state, paid, _ = execute(state, env, skill_id, ids, purpose=MethodPurpose.LONGITUDINAL)
        out.extend(paid)
    counts = {"improved": 0, "regressed": 0, "persistent_fail": 0, "stable_success": 0}
    lines = []
    for x in ids:
        before, after = state.ledger.get(previous, x), state.ledger.get(current, x)
        assert before is not None and after is not None
        kind = ("stable_success" if before.solved and after.solved else
                "regressed" if before.solved else
                "improved" if after.solved else "persistent_fail")
        counts[kind] += 1
        lines.append(f"<task category=\"{kind.replace('_', ' ')}\">\n{render(env, after)}\n"
                     f"<previous_result>score {before.score:.2f}</previous_result>\n</task>")
    comparison = "\n\n".join(lines)
    accepted = sum(v is UpdateVerdict.KEPT for v in verdicts)
    skill = state.current_text
    replies = ask(env, [
        optimizer_request(env, slow_prompt(state.text(previous), skill, comparison,
                                           guidance_of(skill)),
                          kind=CallKind.REFLECTION, system=SLOW_SYSTEM),
        optimizer_request(env, meta_prompt(meta, comparison, accepted, len(verdicts) - accepted),
                          kind=CallKind.REFLECTION, system=META_SYSTEM),
    ])
    memory = last_block(replies[1], GUIDANCE_TAG)
    out.append(EpochReviewed(epoch=epoch, previous_id=previous, current_id=current,
                             guidance=memory is not None, **counts))
    guidance = last_block(replies[0], SLOW_TAG)
    if guidance is not None and with_guidance(skill, guidance) != skill:
        state, updated, added = state.add_skill(with_guidance(skill, guidance), current)
        out.extend(added)
        out.append(UpdateDecided(round=state.round, parent_id=current, candidate_id=updated,
                                 verdict=UpdateVerdict.KEPT, reference_score=best,
                                 detail=SLOW_DETAIL))
        state = state.accept(updated)
    return state, tuple(out), memory or ""


def _final(state: MethodState, env: Env, val: Sequence[str], best: float,
           best_id: str) -> tuple[MethodState, tuple[Event, ...], str]:
    """The best skill on the selection split, or the last one if a slow update made it differ
    and it scores strictly higher there (validated only when that fits in the budget)."""
    last = state.current_id
    if last == best_id or not state.budget.fits(len(state.ledger.missing(last, val))):
        return state, (), best_id
    state, paid, _ = execute(state, env, last, val, purpose=MethodPurpose.VALIDATION)
    score, seen = scored(state, env, last, val, purpose=MethodPurpose.VALIDATION)
    promoted = score > best + 1e-12
    decided = UpdateDecided(round=state.round, parent_id=best_id, candidate_id=last,
                            verdict=UpdateVerdict.KEPT if promoted else UpdateVerdict.REVERTED,
                            score=score, reference_score=best,
                            detail="final: the last skill against the best")
    return state, (*paid, seen, decided), last if promoted else best_id


def estimate(spec: SkillOptMethod, n_train: int, budget: int) -> MethodEstimate:
    """Steps of a batch and a validation each; slow updates at epoch ends from the second."""
    val = validation_size(spec.validation_frac, n_train)
    fit = n_train - val
    batch = min(spec.batch, fit)
    planned = spec.epochs * math.ceil(fit / max(1, batch))
    steps = min(planned, max(0, (budget - val) // (batch + val))) if batch else 0
    slow = min(spec.epochs - 1, max(0, (budget - val - steps * (batch + val))
                                    // (2 * spec.slow_update_samples)))
    target = val + steps * (batch + val) + slow * 2 * spec.slow_update_samples
    per_step = math.ceil(batch / spec.minibatch) + 3  # analysts, two merges, the final one
    return MethodEstimate(target_executions=min(budget, target),
                          optimizer_calls=steps * per_step + 2 * slow, steps=steps)


ENTRY = MethodEntry(
    method=Method.SKILLOPT, spec=SkillOptMethod, label="SkillOpt", iterate=iterate,
    prompt_version=PROMPT_VERSION, estimate=estimate,
    minimum_budget=lambda spec, n: smallest_budget(estimate, spec, n),
    config_fields=SHARED_SETTINGS | ROUNDS, hybrid="SkillOpt with StraTune evaluation",
    propose=skillopt_hybrid.propose, events=skillopt_events.VIEWS,
)
