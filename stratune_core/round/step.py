"""One round of StraTune: `step(state, rng, llm, *, config, task) -> (state', events)`.

Order of work (paper §3; docs/design.md, "The round"): execute s_t on the round's batch (E_t),
choose the operator, generate candidates under it, evaluate each as it is submitted, record
everything. Pure: the only door to
models is `llm`; the same state, rng seed and cache give the same events.
"""

from __future__ import annotations

import numpy as np

from stratune_core.config.knobs import Config
from stratune_core.feedback.execution import build_feedback
from stratune_core.records.enums import Purpose, Reason, SkipReason, StopReason
from stratune_core.records.errors import CoreInvariantError
from stratune_core.records.llm import LLM
from stratune_core.records.task import Task
from stratune_core.released.events import EarlyStopWaived
from stratune_core.round.execute import execute_groups
from stratune_core.round.extras import extend_feedback
from stratune_core.round.hybrid import hybrid_generation
from stratune_core.round.operator_choice import (
    choose_operator,
    choose_without_failures,
    refines_without_failures,
)
from stratune_core.round.readiness import rescreen_deferred
from stratune_core.round.residuals import pool_residuals
from stratune_core.round.strategies import RUNNERS
from stratune_core.round.warmup import finish_warmup_round, in_warmup
from stratune_core.state.candidate_events import CandidateGenerated, CandidateInvalid
from stratune_core.state.context import Env
from stratune_core.state.events import BatchExecuted, Event, RoundSkipped, RoundStarted
from stratune_core.state.state import State
from stratune_core.state.trail import Trail


def step(
    state: State, rng: np.random.Generator, llm: LLM, *, config: Config, task: Task
) -> tuple[State, tuple[Event, ...]]:
    return round_step(state, Env.build(config, task, llm), rng)


def next_round_cost(state: State, env: Env) -> int:
    """The most the next round can need before it starts: its batch (less what the ledger
    holds), then one candidate screened: the candidate on all of Q_s, the current skill on the
    samples of Q_s it has not run (Q_s never holds the batch)."""
    batch = state.batches[state.round % len(state.batches)]
    executed = state.ledger.executed_ids(state.current_id)
    unexecuted = len(set(env.train_ids) - executed - set(batch))
    q = env.shape.screening
    return len(state.ledger.missing(state.current_id, batch)) + q + min(q, unexecuted)


def stop_reason(state: State, env: Env) -> StopReason | None:
    """Why the run must end before the next round, or None. The next round must pay for its
    batch and for screening one candidate on top of the reserve (`round/reserve.py`), so a run that
    stops for the budget leaves at most that much unspent before final skill selection."""
    cfg = env.config
    n_q = len(state.batches)
    epoch, index = divmod(state.round, n_q)
    if cfg.max_rounds is not None and state.round >= cfg.max_rounds:
        return StopReason.MAX_ROUNDS
    if cfg.max_epochs is not None and epoch >= cfg.max_epochs:
        return StopReason.MAX_EPOCHS
    if early_stop(state, cfg) == (True, False):
        return StopReason.EARLY_STOP
    if cfg.max_unusable_rounds is not None and state.unusable_rounds >= cfg.max_unusable_rounds:
        return StopReason.NO_USABLE_CANDIDATES
    if state.idle_rounds >= n_q:
        return StopReason.NO_PROGRESS
    if not state.budget.fits(next_round_cost(state, env)):
        return StopReason.BUDGET
    return None


def early_stop(state: State, cfg: Config) -> tuple[bool, bool]:
    """(the previous epoch accepted nothing, I2 submitted a draft in it), at the first round of
    an epoch e >= 2 with early stopping on; (False, False) elsewhere. The released code stops
    only on (True, False): I2 still submitting keeps the run going (`early_stop_i2`)."""
    n_q = len(state.batches)
    epoch, index = divmod(state.round, n_q)
    if cfg.early_stopping is None or not (index == 0 and epoch >= 2):
        return False, False
    accepted = state.accepted_per_epoch
    idle = epoch - 1 >= len(accepted) or accepted[epoch - 1] == 0
    last_i2 = state.last_i2_submission
    refining = cfg.early_stopping.unless_i2 and last_i2 is not None and last_i2 >= (epoch - 1) * n_q
    return idle, refining


def round_step(state: State, env: Env, rng: np.random.Generator) -> tuple[State, tuple[Event, ...]]:
    if state.finished:
        raise CoreInvariantError(f"step: the run already finished ({state.stop_reason})")
    spent_before = state.budget.spent
    n_q = len(state.batches)
    epoch, index = divmod(state.round, n_q)
    batch = state.batches[index]
    warmup = in_warmup(state, env.config)
    trail = Trail(state, [
        RoundStarted(
            round=state.round, epoch=epoch, batch_index=index, current_id=state.current_id,
            spent=state.budget.spent,
        )
    ])
    if early_stop(state, env.config) == (True, True):
        trail.emit(EarlyStopWaived(round=state.round, epoch=epoch,
                                   i2_round=state.last_i2_submission or 0))
    if not trail.take(execute_groups(state, env, [(state.current_id, batch)],
                                     purpose=Purpose.FEEDBACK)):
        raise CoreInvariantError(
            f"step: round {state.round} cannot pay for its batch; call stop_reason() first"
        )
    cfg = env.config
    fb = build_feedback(
        task=env.task, skill_id=trail.state.current_id, batch_ids=batch,
        ledger=trail.state.ledger, samples=env.samples, max_failures=cfg.max_failures_shown,
        max_examples=cfg.max_solved_offered, train_order=env.train_ids,
    )
    trail.state = trail.state.evolve(feedback=fb)
    trail.emit(BatchExecuted(round=trail.state.round, skill_id=trail.state.current_id,
                             sample_ids=batch, solved=fb.n_solved, mean_score=fb.mean_score))
    if warmup:
        trail.state, warmed = finish_warmup_round(trail.state, cfg)
        trail.emit(warmed)
        return _close(trail, spent_before)
    if trail.state.deferred:  # released: candidates whose screening set was not ready last round
        trail.add(rescreen_deferred(trail.state, env, rng))
    fb, pooled = pool_residuals(trail.state, env, fb)
    trail.emit(*pooled)
    if not fb.failures and not refines_without_failures(trail.state, cfg):
        trail.emit(RoundSkipped(round=trail.state.round, reason=SkipReason.NO_FAILURES))
        return _close(trail, spent_before)
    fb, extended = extend_feedback(trail.state, env, fb)
    trail.state = trail.state.evolve(feedback=fb)
    trail.emit(*extended)
    if env.generator is not None:  # a hybrid of Table 4: another method writes the candidate
        trail.add(hybrid_generation(trail.state, env, rng))
        return _close(trail, spent_before)
    choice = trail.take(choose_operator(trail.state, env, rng) if fb.failures
                        else choose_without_failures(trail.state, env))
    if choice is not None:
        state, evs = RUNNERS[choice.strategy](trail.state, env, rng, choice)
        unusable = unusable_rounds_after(state.unusable_rounds, evs)
        resting = choice.form if cfg.rest_refused_form and unusable > state.unusable_rounds \
            else None
        trail.add((state.evolve(unusable_rounds=unusable, resting_form=resting), evs))
    return _close(trail, spent_before)


# Refusals that say nothing about the optimizer following the format: it wrote a well-formed
# candidate that happened to change nothing, or to repeat an earlier one.
_WELL_FORMED = frozenset({Reason.DUPLICATE, Reason.UNCHANGED})


def unusable_rounds_after(count: int, events: tuple[Event, ...]) -> int:
    """Consecutive rounds without a usable candidate, after this round's strategy `events`: a
    candidate generated resets the count; a round whose candidates were all refused for their
    form or content adds one; any other round leaves it."""
    if any(isinstance(e, CandidateGenerated) for e in events):
        return 0
    refused = [e for e in events if isinstance(e, CandidateInvalid)]
    if refused and all(e.reason not in _WELL_FORMED for e in refused):
        return count + 1
    return count


def _close(trail: Trail, spent_before: int) -> tuple[State, tuple[Event, ...]]:
    state = trail.state
    idle = state.idle_rounds + 1 if state.budget.spent == spent_before else 0
    return state.evolve(round=state.round + 1, idle_rounds=idle), tuple(trail.events)
