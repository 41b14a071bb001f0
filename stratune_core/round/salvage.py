"""Donor salvage: the released code's last improvement step before final skill selection
(`Config.donor_salvage`; docs/released-code.md §3.6). Not in the paper.

A donor is any skill of the run other than s_t (rejected candidates included) that ran at least
`salvage_min_scores` samples and solves at least `salvage_min_rescues` samples that s_t ran and
fails: its rescues. For the donors with the most rescues (at most `salvage_donors`), the
optimizer merges into s_t what made the donor solve them (`round/salvage_prompt.py`), and the merged
candidate goes through candidate evaluation like any other, the rescues kept out of its sets.
Salvage runs after the rounds, so it may spend the reserve, as in the released code whose
reserve funds salvage and final selection; final selection then runs on what remains. The
budget stays a hard cap.
"""

from __future__ import annotations

import numpy as np

from stratune_core.config.mechanisms import active
from stratune_core.feedback.execution import build_feedback
from stratune_core.records.enums import Form, Strategy
from stratune_core.released.events import SalvageAttempted
from stratune_core.round.candidate_eval import Submission, evaluate_candidate
from stratune_core.round.candidates import prepare_candidate
from stratune_core.round.generation import generate, generation_budget, pick
from stratune_core.round.salvage_prompt import salvage_prompt
from stratune_core.state.context import Env
from stratune_core.state.events import Event
from stratune_core.state.history import HistoryEntry
from stratune_core.state.state import State

MAX_RESCUES_SHOWN = 10


def donors(state: State, env: Env) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Every (donor, its rescues in training order), most rescues first (ties: the earlier
    skill)."""
    rule = active(env.config.donor_salvage)
    led, current = state.ledger, state.current_id
    ran = led.executed_ids(current)
    found = []
    for sid in state.skills:
        executed = led.executed_ids(sid)
        if sid == current or len(executed) < rule.min_scores:
            continue
        common = executed & ran
        rescues = tuple(x for x in env.train_ids if x in common
                        and led.get(sid, x).solved and not led.get(current, x).solved)  # type: ignore[union-attr]
        if len(rescues) >= rule.min_rescues:
            found.append((sid, rescues))
    found.sort(key=lambda d: -len(d[1]))
    return tuple(found)


def _last_entry(state: State, skill_id: str) -> HistoryEntry | None:
    return next((e for e in reversed(state.history.entries) if e.candidate_id == skill_id), None)


def salvage(state: State, env: Env, rng: np.random.Generator) -> tuple[State, tuple[Event, ...]]:
    """One merge per donor, at most `salvage_donors`, each screened and validated against the
    current skill of the moment: after an accepted merge the next donor and its rescues are
    found against the merged skill."""
    events: list[Event] = []
    tried: set[str] = set()
    for _ in range(active(env.config.donor_salvage).donors):
        found = [d for d in donors(state, env) if d[0] not in tried]
        if not found:
            break
        donor, rescues = found[0]
        tried.add(donor)
        # a merge that could not even be screened is not worth the optimizer's call
        if state.budget.remaining < env.shape.screening:
            break
        current = state.current_id
        shown = build_feedback(
            task=env.task, skill_id=current, batch_ids=rescues[:MAX_RESCUES_SHOWN],
            ledger=state.ledger, samples=env.samples, max_failures=MAX_RESCUES_SHOWN,
            max_examples=0, train_order=env.train_ids,
        )
        prompt = salvage_prompt(skill_text=state.current_text, donor_text=state.text(donor),
                                rescues=shown, donor_entry=_last_entry(state, donor),
                                budget=generation_budget(env), markup=env.answer_markup,
                                placeholders=env.placeholders)
        (raws,) = generate(env, [(prompt, 0)])
        prepared = None
        if raws:
            state, evs, prepared = prepare_candidate(
                state, env, pick(raws, 1)[0], strategy=Strategy.I1, parent_id=current,
                forms=(Form.F1,), feedback=shown,
            )
            events.extend(evs)
        events.append(SalvageAttempted(
            round=state.round, donor_id=donor, rescues=rescues,
            candidate_id=None if prepared is None else prepared.candidate_id))
        if prepared is None:
            continue
        sub = Submission(
            candidate_id=prepared.candidate_id, strategy=Strategy.I1, form=Form.F1,
            theme=f"salvage of {donor[:8]}: {prepared.theme}"[:120], exclude=frozenset(rescues),
            use_reserve=True,
        )
        state, evs, _ = evaluate_candidate(state, env, sub, rng)
        events.extend(evs)
    return state, tuple(events)
