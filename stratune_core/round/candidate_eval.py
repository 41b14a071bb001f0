"""Candidate evaluation wired to the state: screening, then validation, then the state update.

Every outcome, rejections and unaffordable evaluations included, becomes a `HistoryEntry`.
The reference skill is the current skill at the moment of evaluation: when an earlier candidate
of the same round was accepted, a later one must beat the new current skill.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from attrs import frozen

from stratune_core.evaluation import Outcome
from stratune_core.evaluation.sets import validation_set
from stratune_core.operators.submission import Submission
from stratune_core.records.enums import Reason, Stage, Strategy, Verdict
from stratune_core.released.events import RefinementKept, ScreeningDeferred
from stratune_core.round.pool import prune
from stratune_core.round.reserve import refresh
from stratune_core.round.screening_run import Candidate, Drawn, draw_set, screen_candidate
from stratune_core.round.stages import run_stage
from stratune_core.state.candidate_events import CandidateDecided, SkillReplaced
from stratune_core.state.context import Env
from stratune_core.state.events import Event
from stratune_core.state.history import HistoryEntry
from stratune_core.state.state import State

__all__ = ["Decided", "Evaluated", "Submission", "evaluate_candidate"]


@frozen(kw_only=True)
class Evaluated:
    entry: HistoryEntry
    screening: Outcome | None


Decided = tuple[State, tuple[Event, ...], Evaluated]


def evaluate_candidate(
    state: State, env: Env, sub: Submission, rng: np.random.Generator
) -> Decided:
    cfg = env.config
    ref = state.current_id
    if sub.strategy is Strategy.I2:  # the released early stopping waits for I2's submissions
        state = state.evolve(last_i2_submission=state.round)
    state, drawn = draw_set(state, env, rng, ref, sub.exclude)
    q_s, solved = drawn.ids, drawn.solved_part
    entry_base = dict(
        round=state.round,
        strategy=sub.strategy,
        form=sub.form,
        candidate_id=sub.candidate_id,
        theme=sub.theme,
    )
    if not drawn.ready:
        return _not_ready(state, env, sub, drawn, entry_base)
    if not q_s:
        return _decide(state, env, (), HistoryEntry(
            **entry_base, verdict=Verdict.REJECTED_SCREENING, reasons=(Reason.EMPTY_SET,)
        ), None)
    cand = Candidate(id=sub.candidate_id, reference=ref, exclude=sub.exclude,
                     use_reserve=sub.use_reserve)
    state, events, result = screen_candidate(state, env, cand, q_s, solved, rng)
    s_out = result.outcome
    if s_out is None:
        entry = HistoryEntry(**entry_base, verdict=Verdict.UNAFFORDABLE, reasons=(Reason.UNAFFORDABLE,))
        return _decide(state, env, events, entry, None)
    screened = dict(
        screen_gain=s_out.stats.gain,
        screen_wins=s_out.stats.wins,
        screen_losses=s_out.stats.losses,
        regressions=s_out.stats.counts.D,
        improvements=s_out.stats.counts.U,
    )
    if result.verdict is not None:
        entry = HistoryEntry(**entry_base, **screened, verdict=result.verdict,
                             reasons=result.reasons)
        if result.verdict is Verdict.SAVED:
            state = state.evolve(saved=(*state.saved, sub.candidate_id))
        return _decide(state, env, events, entry, s_out)
    base = {**entry_base, **screened}
    if cfg.validation:
        state, validated, entry = _validation(state, env, sub, ref, result.sample_ids, rng, base)
        events = (*events, *validated)
    else:
        entry = HistoryEntry(**base, verdict=Verdict.ACCEPTED)
    if entry.verdict is not Verdict.ACCEPTED:
        return _decide(state, env, events, entry, s_out)
    state, replaced = _accept(state, sub, env.config.keep_refinement_on_accept)
    return _decide(state, env, (*events, *replaced), entry, s_out)


def _not_ready(state: State, env: Env, sub: Submission, drawn: Drawn,
               entry_base: dict[str, Any]) -> Decided:
    """A screening set whose parts fall short of their quotas (released): screened next round
    the first time (no decision yet), rejected for insufficient evidence the second."""
    deferred = ScreeningDeferred(
        round=state.round, candidate_id=sub.candidate_id, solved=len(drawn.solved_part),
        random=len(drawn.ids) - len(drawn.solved_part), solved_quota=drawn.solved_quota,
        random_quota=env.config.screen_random, retry=sub.retry)
    if not sub.retry:  # screened next round (`round/readiness.py`); no decision yet
        state = state.evolve(deferred=(*state.deferred, sub))
        return state, (deferred,), Evaluated(entry=HistoryEntry(
            **entry_base, verdict=Verdict.REJECTED_SCREENING,
            reasons=(Reason.SET_NOT_READY,)), screening=None)
    return _decide(state, env, (deferred,), HistoryEntry(
        **entry_base, verdict=Verdict.REJECTED_SCREENING,
        reasons=(Reason.INSUFFICIENT_EVIDENCE,)), None)


def _validation(
    state: State, env: Env, sub: Submission, ref: str, screened_ids: Sequence[str],
    rng: np.random.Generator, base: dict[str, Any],
) -> tuple[State, tuple[Event, ...], HistoryEntry]:
    """Validation of a candidate that passed screening, and the entry it earns: accepted,
    rejected, or unaffordable (then saved for final selection)."""
    cfg = env.config
    q_v = validation_set(
        rng, samples=env.train, exclude=sub.exclude | set(screened_ids),
        # all it asks for, or what Q_s left when Q_s keeps its quota (released)
        size=cfg.validation_size(len(env.train)),
    )
    if not q_v:
        return state, (), HistoryEntry(**base, verdict=Verdict.REJECTED_VALIDATION,
                                       reasons=(Reason.EMPTY_SET,))
    state, validated, v_out, stopped = run_stage(
        state, env, cand=sub.candidate_id, ref=ref, ids=q_v, stage=Stage.VALIDATION,
        use_reserve=sub.use_reserve)
    if v_out is None:
        # It passed screening but validation cannot be paid for: keep it for final selection.
        state = state.evolve(saved=(*state.saved, sub.candidate_id))
        return state, validated, HistoryEntry(**base, verdict=Verdict.UNAFFORDABLE,
                                              reasons=(Reason.UNAFFORDABLE,))
    if not v_out.passed or stopped is not None:
        reasons = v_out.failed if stopped is None else (stopped, *v_out.failed)
        return state, validated, HistoryEntry(
            **base, verdict=Verdict.REJECTED_VALIDATION, reasons=reasons,
            val_gain=v_out.stats.gain, held=False)
    return state, validated, HistoryEntry(**base, verdict=Verdict.ACCEPTED,
                                          val_gain=v_out.stats.gain, held=True)


def _accept(state: State, sub: Submission, keep_refinement: bool) -> tuple[State, tuple[Event, ...]]:
    candidate_id = sub.candidate_id
    epoch = state.round // len(state.batches)
    per_epoch = list(state.accepted_per_epoch) + [0] * (epoch + 1 - len(state.accepted_per_epoch))
    per_epoch[epoch] += 1
    event = SkillReplaced(round=state.round, previous_id=state.current_id, current_id=candidate_id)
    saved = state.saved if candidate_id in state.saved else (*state.saved, candidate_id)
    refinement = state.refinement.after_acceptance(sub.strategy, keep=keep_refinement)
    kept = () if not refinement.started else (RefinementKept(
        round=state.round, accepted_id=candidate_id, steps=refinement.steps,
        intermediate_id=refinement.intermediate_id or ""),)
    state = state.evolve(
        current_id=candidate_id,
        saved=saved,
        accepted_per_epoch=tuple(per_epoch),
        refinement=refinement,
    )
    return state, (event, *kept)


def _decide(
    state: State, env: Env, events: tuple[Event, ...], entry: HistoryEntry,
    screening: Outcome | None,
) -> Decided:
    """Record the outcome, keep the saved pool within its cap and hold the reserve it needs."""
    decided = CandidateDecided(
        round=state.round,
        candidate_id=entry.candidate_id,
        verdict=entry.verdict,
        reasons=entry.reasons,
    )
    state, pruned = prune(state.evolve(history=state.history.add_entry(entry)),
                          env.config.archive_cap)
    state = refresh(state, env)
    return state, (*events, decided, *pruned), Evaluated(entry=entry, screening=screening)
