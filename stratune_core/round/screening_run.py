"""Screening one candidate on the state: its screening set, and under the released profile's
probation a second, disjoint one, then what the outcome decides (`evaluation/probation.py`)
and, for the released branch rule, the samples' strata (`evaluation/branch.py`)."""

from __future__ import annotations

from collections.abc import Sequence, Set

import numpy as np
from attrs import frozen

from stratune_core.evaluation import Outcome
from stratune_core.evaluation.branch import Branch, branch_check, branch_of, guard_losses
from stratune_core.evaluation.probation import Call, Guards, ready, screening_decision
from stratune_core.evaluation.screen_usage import ScreenUsage, part_ready, solved_quota
from stratune_core.evaluation.sets import screening_parts
from stratune_core.records.enums import Reason, Stage, Verdict
from stratune_core.released.events import CandidateBranched, ProbationOpened, RuleChecked
from stratune_core.round.stages import run_stage, stage_result
from stratune_core.state.context import Env
from stratune_core.state.events import Event
from stratune_core.state.state import State


@frozen(kw_only=True)
class Screened:
    """`outcome` None: unaffordable; `verdict` None: passed, on to validation."""

    outcome: Outcome | None
    verdict: Verdict | None
    reasons: tuple[Reason, ...]
    sample_ids: tuple[str, ...]  # every sample screened (validation excludes them)


@frozen(kw_only=True)
class Candidate:
    """What screening needs to know about the candidate under evaluation."""

    id: str
    reference: str
    exclude: frozenset[str]
    use_reserve: bool = False


@frozen(kw_only=True)
class Drawn:
    """Q_s (solved part first), which of its samples were drawn as solved, the solved quota it
    was drawn for, and whether each part holds enough of its quota (always, in the paper)."""

    ids: tuple[str, ...]
    solved_part: frozenset[str]
    solved_quota: int
    ready: bool = True


def draw_set(state: State, env: Env, rng: np.random.Generator, ref: str,
             exclude: Set[str]) -> tuple[State, Drawn]:
    """Q_s; under the released profile with its solved quota shrunk while few solved samples
    are known, worn samples left out, the usage counted and readiness judged
    (`evaluation/screen_usage.py`)."""
    cfg = env.config
    solved = state.ledger.solved_ids(ref)
    usage = state.screen_usage
    worn_solved = ScreenUsage.worn(usage.solved, cfg.max_solved_uses)
    known = sum(1 for s in env.train if s.id in solved and s.id not in exclude
                and s.id not in worn_solved)
    quota = solved_quota(cfg.screen_solved, cfg.screen_solved_min, known)
    solved_part, random_part = screening_parts(
        rng, samples=env.train, solved=solved, exclude=exclude, n_solved=quota,
        n_random=cfg.screen_random,
        # Q_v is drawn from what Q_s leaves (0 without validation); the released profile keeps
        # Q_s at its quota and Q_v takes the rest
        keep=0 if cfg.screening_keeps_quota else env.shape.validation, top_up=cfg.screen_top_up,
        split_room=cfg.screen_split_room,
        worn_solved=worn_solved, worn_random=ScreenUsage.worn(usage.random, cfg.max_random_uses),
    )
    share = cfg.screen_ready_share
    ready = share is None or (part_ready(len(solved_part), quota, share)
                              and part_ready(len(random_part), cfg.screen_random, share))
    if ready and (cfg.max_solved_uses is not None or cfg.max_random_uses is not None):
        state = state.evolve(screen_usage=usage.add(solved_part, random_part))  # a set in use
    return state, Drawn(ids=solved_part + random_part, solved_part=frozenset(solved_part),
                        solved_quota=quota, ready=ready)


def screen_candidate(
    state: State, env: Env, cand: Candidate, q_s: tuple[str, ...], solved: frozenset[str],
    rng: np.random.Generator,
) -> tuple[State, tuple[Event, ...], Screened]:
    cfg = env.config
    state, events, out, stopped = run_stage(state, env, cand=cand.id, ref=cand.reference,
                                            ids=q_s, stage=Stage.SCREENING, solved=solved,
                                            use_reserve=cand.use_reserve)
    if out is None or stopped is not None:
        return state, events, _stopped(out, stopped, q_s)
    ids, drawn_solved = q_s, [x in solved for x in q_s]
    call, branch, ruled = _call(state, env, cand, out, ids, drawn_solved, final=cfg.probation is None)
    if call is Call.PROBATION:
        state, second_set = draw_set(state, env, rng, cand.reference, cand.exclude | set(q_s))
        q2, solved2 = second_set.ids, second_set.solved_part
        if q2:
            opened = ProbationOpened(round=state.round, candidate_id=cand.id,
                                     changes=out.stats.wins + out.stats.losses, sample_ids=q2)
            state, second, out2, stopped = run_stage(
                state, env, cand=cand.id, ref=cand.reference, ids=q2, stage=Stage.SCREENING,
                solved=solved2, use_reserve=cand.use_reserve)
            events = (*events, opened, *second)
            if stopped is not None:
                return state, events, _stopped(out2, stopped, q_s + q2)
            if out2 is not None:
                ids, drawn_solved = q_s + q2, drawn_solved + [x in solved2 for x in q2]
                combined, out = stage_result(state, env, cand.id, cand.reference, ids,
                                             Stage.SCREENING)
                events = (*events, combined)
        # decided on what was screened: both sets, or the first when no second was possible
        call, branch, ruled = _call(state, env, cand, out, ids, drawn_solved, final=True)
    events = (*events, *ruled)
    reasons = out.failed
    if cfg.probation is not None and not ready(out, cfg):
        reasons = (*reasons, Reason.TOO_FEW_CHANGES)
    if branch is not None:
        events = (*events, CandidateBranched(
            round=state.round, candidate_id=cand.id, wins=branch.wins, losses=branch.losses,
            win_strata=branch.win_strata, loss_strata=branch.loss_strata))
    verdict = {Call.PASS: None, Call.SAVE: Verdict.SAVED, Call.BRANCH: Verdict.SAVED,
               Call.REJECT: Verdict.REJECTED_SCREENING}[call]
    return state, events, Screened(outcome=out, verdict=verdict,
                                   reasons=() if verdict is None else reasons, sample_ids=ids)


def _call(state: State, env: Env, cand: Candidate, out: Outcome, ids: Sequence[str],
          drawn_solved: Sequence[bool], *, final: bool
          ) -> tuple[Call, Branch | None, tuple[RuleChecked, ...]]:
    """The call, the branch when it is one, and (released rules only) an event per rule
    consulted, naming the conditions that failed."""
    cfg = env.config
    random_part = [not s for s in drawn_solved]
    branch = None
    if cfg.branch_saves is not None:
        branch = branch_check(
            state.ledger.scores(cand.reference, ids), state.ledger.scores(cand.id, ids),
            outcome=out, strata=[env.samples[x].stratum for x in ids],
            random_part=random_part, config=cfg)
    guards = Guards(severe=guard_losses(out, random_part),
                    aux=aux_change(state, cand.reference, cand.id, ids))
    call, consulted = screening_decision(out, config=cfg, branch=branch, final=final,
                                         guards=guards)
    explained = cfg.probation is not None or cfg.branch_saves is not None \
        or cfg.guard_severe_max is not None \
        or cfg.aux_guardrail
    events = tuple(RuleChecked(round=state.round, candidate_id=cand.id, rule=r.rule,
                               holds=r.holds, conditions=r.conditions)
                   for r in consulted) if explained else ()
    branched = branch_of(branch, out) if call is Call.BRANCH and branch is not None else None
    return call, branched, events


def aux_change(state: State, ref: str, cand: str, ids: Sequence[str]) -> float | None:
    """Mean change of the auxiliary metric over the samples where both skills have one."""
    diffs = []
    for x in ids:
        b, c = state.ledger.get(ref, x), state.ledger.get(cand, x)
        if b is not None and c is not None and b.aux is not None and c.aux is not None:
            diffs.append(c.aux - b.aux)
    return sum(diffs) / len(diffs) if diffs else None


def _stopped(out: Outcome | None, stopped: Reason | None, ids: tuple[str, ...]) -> Screened:
    """Unaffordable (no outcome), or stopped early by the smoke check or the futility stop."""
    if out is None:
        return Screened(outcome=None, verdict=Verdict.UNAFFORDABLE, reasons=(Reason.UNAFFORDABLE,),
                        sample_ids=ids)
    assert stopped is not None
    return Screened(outcome=out, verdict=Verdict.REJECTED_SCREENING,
                    reasons=(stopped, *out.failed), sample_ids=ids)
