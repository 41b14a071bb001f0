"""The pool of saved candidate skills (paper App. B): who is kept, and who reaches final skill
selection.

Saved are the accepted candidates (also once replaced) and the screened candidates whose gain
was positive but below eps_s. App. B leaves the pool's maintenance to the released code, which
keeps at most `archive_cap` entries (4) counting the current skill: the current skill always
stays, the others are ranked by 10 x (samples where the candidate beats the current skill,
among those both ran) + (the candidate's mean score on them), and the rest are dropped.
"""

from __future__ import annotations

from stratune_core.records.enums import SeatRule
from stratune_core.released.events import SeatRefused
from stratune_core.state.candidate_events import CandidatePruned
from stratune_core.state.state import State


def _common(state: State, a: str, b: str) -> list[str]:
    return sorted(state.ledger.executed_ids(a) & state.ledger.executed_ids(b))


def paired_gain(state: State, cand: str, ref: str) -> float:
    """Mean score difference over the samples both skills ran (0 when there are none)."""
    common = _common(state, cand, ref)
    if not common:
        return 0.0
    c = state.ledger.scores(cand, common)
    r = state.ledger.scores(ref, common)
    return sum(a - b for a, b in zip(c, r, strict=True)) / len(common)


def rivals(state: State) -> tuple[str, ...]:
    """Saved candidates other than the current skill, in the order they were saved."""
    return tuple(sid for sid in dict.fromkeys(state.saved) if sid != state.current_id)


def seating(
    state: State, seats: int | None, min_common: int = 0
) -> tuple[tuple[str, ...], tuple[SeatRefused, ...]]:
    """The rivals that reach final skill selection, best paired gain over the current skill
    first, and those refused a seat: the released code seats at most `seats` (two; Mind2Web
    three) and only rivals that ran at least `min_common` samples (20) the current skill ran."""
    ranked = sorted(rivals(state), key=lambda sid: -paired_gain(state, sid, state.current_id))
    seated: list[str] = []
    refused: list[SeatRefused] = []
    for sid in ranked:
        common = len(_common(state, sid, state.current_id)) if min_common else 0
        if common < min_common:
            refused.append(SeatRefused(candidate_id=sid, rule=SeatRule.COMMON, common=common))
        elif seats is not None and len(seated) >= seats:
            refused.append(SeatRefused(candidate_id=sid, rule=SeatRule.SEATS, common=common))
        else:
            seated.append(sid)
    return tuple(seated), tuple(refused)


def contenders(state: State, seats: int | None, min_common: int = 0) -> tuple[str, ...]:
    """The rivals that reach final skill selection (`seating`)."""
    return seating(state, seats, min_common)[0]


def keep_value(state: State, cand: str) -> float:
    """The released ranking of a saved candidate against the current skill."""
    common = _common(state, cand, state.current_id)
    if not common:
        return 0.0
    c = state.ledger.scores(cand, common)
    r = state.ledger.scores(state.current_id, common)
    wins = sum(a > b + 1e-12 for a, b in zip(c, r, strict=True))
    return 10.0 * wins + sum(c) / len(c)


def prune(state: State, cap: int | None) -> tuple[State, tuple[CandidatePruned, ...]]:
    """At most `cap` saved skills, the current skill always among them (ties keep the earlier
    saved); the dropped ones leave the pool and never reach final skill selection."""
    saved = tuple(dict.fromkeys(state.saved))
    if cap is None or len(saved) <= cap:
        return state, ()
    others = [sid for sid in saved if sid != state.current_id]
    seats = cap - (len(others) < len(saved))
    order = sorted(range(len(others)), key=lambda i: (-keep_value(state, others[i]), i))
    kept = {others[i] for i in order[:seats]}
    dropped = tuple(sid for sid in others if sid not in kept)
    state = state.evolve(saved=tuple(sid for sid in saved if sid not in dropped))
    return state, tuple(CandidatePruned(round=state.round, candidate_id=sid) for sid in dropped)
