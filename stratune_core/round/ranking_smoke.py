"""Released code: before an I2 or I3 draft is scored on the whole ranking subset, it runs on
its first `ranking_smoke` samples (12); a draft whose mean there is under
`ranking_smoke_share` (0.25) of the reference's mean on the whole subset is killed (not
submitted) and its remaining ranking executions are saved. The check applies only when the
reference scores above 0.05 there (a reference that fails nearly everything says nothing about
a broken draft). Off in the paper (`ranking_smoke` 0)."""

from __future__ import annotations

from stratune_core.records.enums import Purpose, Reason, Strategy, Verdict
from stratune_core.released.events import RankingSmokeFailed
from stratune_core.round.candidates import Prepared
from stratune_core.round.execute import execute_groups, mean_score
from stratune_core.state.candidate_events import CandidateDecided
from stratune_core.state.context import Env
from stratune_core.state.events import Event
from stratune_core.state.history import HistoryEntry
from stratune_core.state.state import State

MIN_REFERENCE = 0.05


def smoke_threshold(reference_score: float, share: float) -> float | None:
    """The score a draft must reach on the smoke samples, or None: no check."""
    return share * reference_score if reference_score > MIN_REFERENCE else None


def smoke_drafts(state: State, env: Env, reference: str, drafts: list[Prepared],
                 strategy: Strategy) -> tuple[State, tuple[Event, ...], list[Prepared]]:
    """The drafts that survive the smoke check (all of them when it is off or cannot be paid
    for: ranking then reports the cost)."""
    cfg = env.config
    ids = state.ranking_ids
    if cfg.ranking_smoke is None:
        return state, (), drafts
    n = cfg.ranking_smoke.samples
    if not drafts or n >= len(ids):
        return state, (), drafts
    smoke = ids[:n]
    groups = [(reference, ids)] + [(p.candidate_id, smoke) for p in drafts]
    state, charged, admitted = execute_groups(state, env, groups, purpose=Purpose.RANKING)
    if not admitted:
        return state, (), drafts
    events: list[Event] = list(charged)
    reference_score = mean_score(state, reference, ids)
    threshold = smoke_threshold(reference_score, cfg.ranking_smoke.share)
    survivors = []
    for p in drafts:
        score = mean_score(state, p.candidate_id, smoke)
        if threshold is None or score >= threshold:
            survivors.append(p)
            continue
        events.append(RankingSmokeFailed(round=state.round, candidate_id=p.candidate_id,
                                         sample_ids=smoke, score=score,
                                         reference_score=reference_score))
        entry = HistoryEntry(round=state.round, strategy=strategy, form=p.form,
                             candidate_id=p.candidate_id, theme=p.theme,
                             verdict=Verdict.NOT_SUBMITTED, reasons=(Reason.SMOKE_BROKEN,))
        state = state.evolve(history=state.history.add_entry(entry))
        events.append(CandidateDecided(round=state.round, candidate_id=p.candidate_id,
                                       verdict=Verdict.NOT_SUBMITTED, reasons=(Reason.SMOKE_BROKEN,)))
    return state, tuple(events), survivors
