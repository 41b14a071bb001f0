"""I2 and I3 rank their drafts against a reference skill on the fixed ranking subset (paper
App. A.1), and I2 submits a draft unless the reference beats it there."""

from __future__ import annotations

from stratune_core.records.enums import Purpose, Reason, Stage, Strategy, Verdict
from stratune_core.round.candidates import Prepared
from stratune_core.round.execute import execute_groups, mean_score
from stratune_core.state.candidate_events import CandidateUnaffordable
from stratune_core.state.context import Env
from stratune_core.state.events import Event
from stratune_core.state.history import HistoryEntry
from stratune_core.state.state import State

Ranking = tuple[tuple[float, ...], float]  # the drafts' scores on the subset, the reference's


def submits(score: float, reference_score: float) -> bool:
    """Paper: each candidate is submitted as soon as it is generated, and I2 submits the drafts
    that score higher on the common subset. One draft per step is compared with s~ alone, so a
    draft goes on unless s~ beats it: a tie on a subset of a dozen samples says nothing against
    the draft, and candidate evaluation, on more samples, decides (an evaluated draft may then
    become the intermediate skill even if it does not replace s_t)."""
    return score >= reference_score - 1e-12


def rank_drafts(
    state: State, env: Env, reference: str, drafts: list[Prepared], strategy: Strategy
) -> tuple[State, list[Event], Ranking | None]:
    """The reference and the drafts run on the fixed ranking subset, paid together: their mean
    scores there, or None (each draft unaffordable, in the history) when the group does not
    fit the budget."""
    ids = state.ranking_ids
    groups = [(reference, ids)] + [(p.candidate_id, ids) for p in drafts]
    state, charged, admitted = execute_groups(state, env, groups, purpose=Purpose.RANKING)
    events: list[Event] = list(charged)
    if not admitted:
        for p in drafts:
            events.append(CandidateUnaffordable(
                round=state.round, candidate_id=p.candidate_id, stage=Stage.SCREENING,
                cost=len(ids) * len(groups), remaining=state.budget.remaining_before_reserve,
            ))
            entry = HistoryEntry(
                round=state.round, strategy=strategy, form=p.form, candidate_id=p.candidate_id,
                theme=p.theme, verdict=Verdict.UNAFFORDABLE, reasons=(Reason.UNAFFORDABLE,),
            )
            state = state.evolve(history=state.history.add_entry(entry))
        return state, events, None
    ref_score = mean_score(state, reference, ids)
    return state, events, (tuple(mean_score(state, p.candidate_id, ids) for p in drafts),
                           ref_score)
