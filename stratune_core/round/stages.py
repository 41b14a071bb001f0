"""One stage of candidate evaluation on the state: execute the reference and the candidate on
the stage's samples, then apply the stage's rule (paper App. B).

The released profile runs a stage in parts and may stop after one (docs/design.md, "Released
profile"): screening's smoke check (the candidate alone on solved samples) and its stage-1
futility stop, validation's futility stop (`evaluation/futility.py`). The whole stage's cost is
admitted before its first part runs, so a stage is never begun that the budget cannot finish;
a stopped stage has spent only its first part. Unstaged (the paper), a stage is one group of
executions, as before.
"""

from __future__ import annotations

from collections.abc import Sequence, Set

from stratune_core.config.mechanisms import active
from stratune_core.evaluation import Outcome, paired_stats, screen, validate
from stratune_core.evaluation.futility import (
    interleave,
    screening_futile,
    smoke_check,
    stage_one_size,
    validation_futile,
)
from stratune_core.records.enums import Purpose, Reason, Stage
from stratune_core.released.events import FutilityStopped, SmokeFailed, SmokePassed
from stratune_core.round.execute import execute_groups
from stratune_core.state.candidate_events import CandidateUnaffordable, StageResult
from stratune_core.state.context import Env
from stratune_core.state.events import Event
from stratune_core.state.state import State

# (state, events, the stage's outcome (None: unaffordable), why it stopped early (None: it ran))
StageRun = tuple[State, tuple[Event, ...], Outcome | None, Reason | None]


def stage_result(
    state: State, env: Env, cand: str, ref: str, ids: Sequence[str], stage: Stage
) -> tuple[StageResult, Outcome]:
    """The stage's rule on `ids`, all executed by both skills."""
    base = state.ledger.scores(ref, ids)
    scores = state.ledger.scores(cand, ids)
    rule = screen if stage is Stage.SCREENING else validate
    outcome = rule(base, scores, config=env.config, eps0=env.eps0, success_threshold=env.threshold)
    event = StageResult(round=state.round, candidate_id=cand, reference_id=ref, outcome=outcome,
                        sample_ids=tuple(ids))
    return event, outcome


def _parts(env: Env, ids: Sequence[str], stage: Stage,
           solved: Set[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(smoke samples, stage-1 samples); empty when that part is off or would be everything."""
    cfg = env.config
    if stage is Stage.VALIDATION:
        n = cfg.validation_futility
        return (), (tuple(ids[:n]) if 0 < n < len(ids) else ())
    solved_part = [x for x in ids if x in solved]
    random_part = [x for x in ids if x not in solved]
    smoke = cfg.screen_smoke.samples if cfg.screen_smoke is not None else 0
    smoke_ids = tuple(solved_part[:smoke]) if 0 < smoke <= len(solved_part) else ()
    first: tuple[str, ...] = ()
    futility = cfg.screen_futility
    if futility is not None and (size := stage_one_size(len(ids), futility.stage1)) < len(ids):
        first = interleave(solved_part, random_part)[:size]
    return smoke_ids, first


def run_stage(
    state: State,
    env: Env,
    *,
    cand: str,
    ref: str,
    ids: Sequence[str],
    stage: Stage,
    solved: Set[str] = frozenset(),
    use_reserve: bool = False,
) -> StageRun:
    """`solved`: the samples of `ids` that were drawn as solved by `ref` (screening's solved
    part, from which the smoke check takes its samples)."""
    purpose = Purpose(stage.value)
    smoke, first = _parts(env, ids, stage, solved)
    events: list[Event] = []
    cost = len(state.ledger.missing(ref, ids)) + len(state.ledger.missing(cand, ids))
    room = state.budget.remaining if use_reserve else state.budget.remaining_before_reserve
    if (smoke or first) and cost > room:
        return state, (_unaffordable(state, cand, stage, cost, room),), None, None
    if smoke:
        state, charged, admitted = execute_groups(state, env, [(cand, smoke)], purpose=purpose,
                                                  use_reserve=use_reserve)
        events.extend(charged)
        led = state.ledger
        check = smoke_check([led.get(ref, x).solved for x in smoke],  # type: ignore[union-attr]
                            [led.get(cand, x).solved for x in smoke],  # type: ignore[union-attr]
                            broken=active(env.config.screen_smoke).broken)
        if check.failed:
            result, outcome = stage_result(state, env, cand, ref, smoke, stage)
            stop = SmokeFailed(round=state.round, candidate_id=cand, sample_ids=smoke,
                               broken=check.broken, kept=check.kept)
            return state, (*events, result, stop), outcome, Reason.SMOKE_BROKEN
        events.append(SmokePassed(round=state.round, candidate_id=cand, sample_ids=smoke,
                                  broken=check.broken, kept=check.kept))
    if first:
        state, charged, admitted = execute_groups(state, env, [(ref, first), (cand, first)],
                                                  purpose=purpose, use_reserve=use_reserve)
        events.extend(charged)
        stats = paired_stats(state.ledger.scores(ref, first), state.ledger.scores(cand, first),
                             success_threshold=env.threshold, delta=env.config.delta)
        futile = (screening_futile(stats, eps0=env.eps0,
                                   losses=active(env.config.screen_futility).losses)
                  if stage is Stage.SCREENING else validation_futile(stats))
        if futile:
            result, outcome = stage_result(state, env, cand, ref, first, stage)
            stop = FutilityStopped(round=state.round, candidate_id=cand, stage=stage,
                                   sample_ids=first, gain=stats.gain, wins=stats.wins,
                                   losses=stats.losses)
            return state, (*events, result, stop), outcome, Reason.FUTILITY
    state, charged, admitted = execute_groups(state, env, [(ref, ids), (cand, ids)],
                                              purpose=purpose, use_reserve=use_reserve)
    events.extend(charged)
    if not admitted:
        room = state.budget.remaining if use_reserve else state.budget.remaining_before_reserve
        return state, (*events, _unaffordable(state, cand, stage, cost, room)), None, None
    result, outcome = stage_result(state, env, cand, ref, ids, stage)
    return state, (*events, result), outcome, None


def _unaffordable(state: State, cand: str, stage: Stage, cost: int, room: int) -> CandidateUnaffordable:
    return CandidateUnaffordable(round=state.round, candidate_id=cand, stage=stage, cost=cost,
                                 remaining=room)
