"""The released code's I2 submission window (`Config.i2_window`).

In the paper each I2 step submits its draft when it beats the intermediate skill s~ on the
ranking subset. The released code collects drafts instead: every I2 step ranks one draft
against s~ and puts it in a window; when the window holds `i2_window_drafts` (4) drafts, the
best `i2_window_seats` (2) by ranking score go to candidate evaluation, each unless it scored
more than `i2_window_slack` (0.02) below s~, and the window empties. A seated draft that is
accepted replaces s_t and restarts refinement (the other seat is then not evaluated); one that
is not may still become s~ by the ratchet (`Refinement.advances`). At the end of the run a
window holding at least two drafts submits its best one (`flush`).

Every evaluation goes through candidate evaluation's admission control; nothing here spends
on its own. The flush happens after the rounds, within the rounds' budget: the reserve stays
for final skill selection (the released code lets the flush draw on its reserve).
"""

from __future__ import annotations

import numpy as np

from stratune_core.config.mechanisms import active
from stratune_core.operators.refinement import WindowDraft
from stratune_core.records.enums import Strategy, Verdict
from stratune_core.released.events import WindowSubmitted
from stratune_core.round.candidate_eval import Submission, evaluate_candidate
from stratune_core.state.candidate_events import CandidateDecided, RefinementAdvanced
from stratune_core.state.context import Env
from stratune_core.state.events import Event
from stratune_core.state.history import HistoryEntry
from stratune_core.state.state import State

Result = tuple[State, tuple[Event, ...]]


def _set_aside(state: State, draft: WindowDraft) -> Result:
    entry = HistoryEntry(
        round=state.round, strategy=Strategy.I2, form=draft.form,
        candidate_id=draft.candidate_id, theme=draft.theme, verdict=Verdict.NOT_SUBMITTED,
    )
    event = CandidateDecided(round=state.round, candidate_id=draft.candidate_id,
                             verdict=Verdict.NOT_SUBMITTED)
    return state.evolve(history=state.history.add_entry(entry)), (event,)


def submit_window(
    state: State, env: Env, rng: np.random.Generator, *, seats: int, flush: bool = False
) -> Result:
    """Empty the window: evaluate its best `seats` drafts (within the slack), in score order."""
    cfg = env.config
    slack = active(cfg.i2_window).slack
    window = sorted(state.refinement.window, key=lambda d: -d.score)  # stable: draft order
    seated = [d for d in window[:seats]
              if d.score >= d.reference_score - slack - 1e-12]
    state = state.evolve(refinement=state.refinement.emptied())
    events: list[Event] = [WindowSubmitted(
        round=state.round, candidate_ids=tuple(d.candidate_id for d in window),
        scores=tuple(d.score for d in window),
        reference_scores=tuple(d.reference_score for d in window),
        submitted=tuple(d.candidate_id for d in seated), flush=flush,
    )]
    for draft in window:
        if draft not in seated:
            state, evs = _set_aside(state, draft)
            events.extend(evs)
    advanced = False
    for i, draft in enumerate(seated):
        sub = Submission(candidate_id=draft.candidate_id, strategy=Strategy.I2, form=draft.form,
                         theme=draft.theme, exclude=draft.exclude)
        state, evs, evaluated = evaluate_candidate(state, env, sub, rng)
        events.extend(evs)
        if evaluated.entry.accepted:  # refinement restarted from the new s_t
            for rest in seated[i + 1:]:
                state, evs = _set_aside(state, rest)
                events.extend(evs)
            events.append(RefinementAdvanced(round=state.round, intermediate_id=state.current_id,
                                             steps=0, advanced=True))
            return state, tuple(events)
        s_out = evaluated.screening
        ref = state.refinement
        if s_out is not None and ref.advances(s_out.stats.gain, s_out.threshold,
                                              cfg.i2_advance_band):
            state = state.evolve(refinement=ref.advanced(draft.candidate_id, s_out.stats.gain,
                                                         draft.score))
            advanced = True
    ref = state.refinement
    events.append(RefinementAdvanced(round=state.round, intermediate_id=ref.intermediate_id or "",
                                     steps=ref.steps, advanced=advanced))
    return state, tuple(events)


def add_draft(state: State, env: Env, rng: np.random.Generator, draft: WindowDraft) -> Result:
    """Put a ranked draft in the window; submit the window once it is full."""
    state = state.evolve(refinement=state.refinement.waiting(draft))
    window = env.config.i2_window
    if window is None or len(state.refinement.window) < window.drafts:
        ref = state.refinement
        return state, (RefinementAdvanced(round=state.round, intermediate_id=ref.intermediate_id
                                          or "", steps=ref.steps, advanced=False),)
    return submit_window(state, env, rng, seats=window.seats)


def flush_window(state: State, env: Env, rng: np.random.Generator) -> Result:
    """After the last round: a window of two or more drafts submits its best one."""
    if env.config.i2_window is None or len(state.refinement.window) < 2:
        return state, ()
    return submit_window(state, env, rng, seats=1, flush=True)
