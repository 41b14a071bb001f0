"""SkillOpt (paper App. "Baseline Settings"; the released trainer's loop where the paper is
silent): epochs over the fit split (2/3 of train; the rest is the selection split) in batches
of 40. A step: the current skill on the batch; one analyst call per minibatch of 8 failures or
8 successes (with the meta guidance); the proposals merged in groups of 8; the best-scored
applied, as many as the cosine schedule allows (4 -> 2 over the planned steps); the result
kept only if it scores strictly higher on the selection split. From the second epoch on, each
epoch ends with a slow update (the previous epoch's skill and the current one on the same
samples, edits from that comparison, gated the same way) and new meta guidance.

A step is started only if its batch and a whole selection split fit in the budget; the run
ends after its epochs or when the next step does not fit. The final skill is the current one
(with a strict gate it is also the best on the selection split).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from llm_cache.records import CallKind
from stratune_core.config.knobs import Config
from stratune_core.methods.executions import execute
from stratune_core.methods.finish import finish
from stratune_core.methods.opening import open_with_validation
from stratune_core.methods.replies import last_block
from stratune_core.methods.skillopt_edits import apply_selected, edit_limit, gate, proposals, top
from stratune_core.methods.skillopt_prompts import (
    GUIDANCE_TAG,
    META_SYSTEM,
    SLOW_SYSTEM,
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
from stratune_core.records.method_events import EditsSelected, EpochReviewed, UpdateDecided
from stratune_core.records.method_spec import SkillOptMethod
from stratune_core.records.purposes import MethodPurpose, UpdateVerdict
from stratune_core.records.task import Task
from stratune_core.state.context import Env
from stratune_core.state.events import Event

Step = tuple[MethodState, tuple[Event, ...]]
LONGITUDINAL_EPOCH = 1000  # the slow update's sample order: a stream apart from the epochs'


def iterate(spec: SkillOptMethod, config: Config, task: Task, llm: LLM) -> Iterator[Step]:
    env = Env.build(config, task, llm)
    opened = open_with_validation(spec, config, task, env)
    yield opened.state, opened.events
    if opened.score is None:
        return
    state, fit, val, best = opened.state, opened.fit, opened.validation, opened.score
    total = spec.epochs * steps_in(len(fit), spec.batch)
    meta, reason, step = "", None, 0
    for epoch in range(spec.epochs):
        state = state.evolve(accepted_per_epoch=(*state.accepted_per_epoch, 0)) if epoch else state
        previous = state.current_id
        verdicts: list[UpdateVerdict] = []
        for batch in chunks(epoch_order(fit, config.seed, epoch), spec.batch):
            reason = _stop(state, config, batch, val)
            if reason is not None:
                break
            limit = edit_limit(spec.edits_start, spec.edits_end, step, total)
            state, events, best = _step(state, env, spec, batch, val, best, limit, meta)
            verdicts += [e.verdict for e in events if isinstance(e, UpdateDecided)]
            state, step = state.evolve(round=state.round + 1), step + 1
            yield state, events
        if reason is not None:
            break
        if epoch >= 1 and previous != state.current_id:
            state, events, best, meta = _epoch_end(state, env, spec, epoch, previous, fit, val,
                                                   best, meta, verdicts)
            state = state.evolve(round=state.round + 1) if events else state
            yield state, events
    state, done = finish(state, state.current_id, reason or StopReason.COMPLETED)
    yield state, done


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
    text, applied = made.text, made.applied
    selected = EditsSelected(round=state.round, proposed=made.proposed, merged=made.merged,
                             limit=limit, applied=applied)
    if applied == 0:
        return state, (*paid, selected, UpdateDecided(
            round=state.round, parent_id=parent, candidate_id=None,
            verdict=UpdateVerdict.UNUSABLE, reference_score=best,
            detail="no applicable edit")), best
    state, gated, best = gate(state, env, parent, text, val, best)
    return state, (*paid, selected, *gated), best


def _epoch_end(state: MethodState, env: Env, spec: SkillOptMethod, epoch: int, previous: str,
               fit: Sequence[str], val: Sequence[str], best: float, meta: str,
               verdicts: Sequence[UpdateVerdict],
               ) -> tuple[MethodState, tuple[Event, ...], float, str]:
    """The slow update and the meta guidance, from the previous epoch's skill and the current
    one on the same samples; skipped when they do not fit in the budget with a validation."""
    current = state.current_id
    ids = epoch_order(fit, env.config.seed, LONGITUDINAL_EPOCH + epoch)[:spec.slow_update_samples]
    need = len(state.ledger.missing(previous, ids)) + len(state.ledger.missing(current, ids))
    if not state.budget.fits(need + len(val)):
        return state, (), best, meta
    out: list[Event] = []
    for skill_id in (previous, current):
        state, paid, _ = execute(state, env, skill_id, ids, purpose=MethodPurpose.LONGITUDINAL)
        out.extend(paid)
    pairs = [(state.ledger.get(previous, x), state.ledger.get(current, x)) for x in ids]
    counts = {"improved": 0, "regressed": 0, "persistent_fail": 0, "stable_success": 0}
    lines = []
    for before, after in pairs:
        assert before is not None and after is not None
        kind = ("stable_success" if before.solved and after.solved else
                "regressed" if before.solved else
                "improved" if after.solved else "persistent_fail")
        counts[kind] += 1
        lines.append(f"<task category=\"{kind.replace('_', ' ')}\">\n{render(env, after)}\n"
                     f"<previous_result>score {before.score:.2f}</previous_result>\n</task>")
    comparison = "\n\n".join(lines)
    accepted = sum(v is UpdateVerdict.KEPT for v in verdicts)
    replies = ask(env, [
        optimizer_request(env, slow_prompt(state.text(previous), state.current_text, comparison,
                                           meta), kind=CallKind.REFLECTION, system=SLOW_SYSTEM),
        optimizer_request(env, meta_prompt(meta, comparison, accepted, len(verdicts) - accepted),
                          kind=CallKind.REFLECTION, system=META_SYSTEM),
    ])
    memory = last_block(replies[1], GUIDANCE_TAG)
    out.append(EpochReviewed(epoch=epoch, previous_id=previous, current_id=current,
                             guidance=memory is not None, **counts))
    text, applied = apply_selected(state.current_text, top(proposals(replies[0]),
                                                           spec.edits_start))
    if applied:
        state, gated, best = gate(state, env, current, text, val, best, detail="slow update")
        out.extend(gated)
    return state, tuple(out), best, memory if memory is not None else meta
