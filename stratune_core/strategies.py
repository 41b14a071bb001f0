"""The three search strategies (paper §3.1, App. A.1).

I1 direct revision: the optimizer picks forms and writes candidates from s_t.
I2 iterative refinement: one step on the intermediate skill s~, ranked against s~.
I3 parallel sampling: K draws under one form, ranked on the shared subset, best (+ runner-up).
Each candidate goes to candidate evaluation as soon as it can be submitted.
"""

from __future__ import annotations

import numpy as np

from stratune_core.candidate_eval import Submission, evaluate_candidate
from stratune_core.candidates import Prepared, prepare_candidate
from stratune_core.context import Env
from stratune_core.enums import Form, Purpose, Reason, Stage, Strategy, Verdict
from stratune_core.events import (
    CandidateDecided,
    CandidateInvalid,
    CandidateUnaffordable,
    DraftsRanked,
    Event,
    RefinementAdvanced,
)
from stratune_core.execute import execute_groups, mean_score
from stratune_core.feedback import Feedback, build_feedback
from stratune_core.feedback_prep import prepare_feedback
from stratune_core.generation import generate, generation_budget
from stratune_core.history import HistoryEntry, OperatorChoice
from stratune_core.i2_window import add_draft
from stratune_core.i3_submission import pick_submissions
from stratune_core.operators import available_forms
from stratune_core.prompts import generation_prompt
from stratune_core.ranking_smoke import smoke_drafts
from stratune_core.refinement import WindowDraft
from stratune_core.state import State

Result = tuple[State, tuple[Event, ...]]


def _exclusions(fb: Feedback, forms: tuple[Form, ...], prepared: Prepared, ranked: tuple[str, ...] = (),
                *, by_form: bool = False, strategy: Strategy = Strategy.I1) -> frozenset[str]:
    if by_form:  # released: the offered examples are the sources of the forms that use them
        uses = prepared.form is not Form.F4 if strategy is Strategy.I2 else prepared.form is Form.F2
        shown = fb.shown_ids(examples=uses, gold_pairs=False)
    else:
        shown = fb.shown_ids(examples=Form.F2 in forms)
    return shown | set(ranked) | prepared.used_examples


def _unparseable(state: State, strategy: Strategy, form: Form | None, draw: int = 0) -> Result:
    event = CandidateInvalid(
        round=state.round, strategy=strategy, form=form, reason=Reason.UNPARSEABLE,
        detail="no <candidate> block in the reply (after one repair)", draw=draw,
    )
    entry = HistoryEntry(
        round=state.round, strategy=strategy, form=form, candidate_id="", verdict=Verdict.INVALID,
        reasons=(Reason.UNPARSEABLE,),
    )
    return state.evolve(history=state.history.add_entry(entry)), (event,)


def _not_submitted(state: State, p: Prepared, strategy: Strategy) -> Result:
    entry = HistoryEntry(
        round=state.round, strategy=strategy, form=p.form, candidate_id=p.candidate_id,
        theme=p.theme, verdict=Verdict.NOT_SUBMITTED,
    )
    event = CandidateDecided(
        round=state.round, candidate_id=p.candidate_id, verdict=Verdict.NOT_SUBMITTED
    )
    return state.evolve(history=state.history.add_entry(entry)), (event,)


def direct_revision(state: State, env: Env, rng: np.random.Generator, choice: OperatorChoice) -> Result:
    fb = state.feedback
    assert fb is not None
    forms = (choice.form,) if choice.form is not None else available_forms(env.config.forms, fb)
    n = env.config.n_candidates_i1
    prep, prepared = prepare_feedback(state, env, fb)
    prompt = generation_prompt(
        skill_text=state.current_text, feedback=fb, forms=forms, n_candidates=n,
        max_edits=env.config.max_edits, preparation=prep, budget=generation_budget(env),
    )
    (raws,) = generate(env, [(prompt, 0)])
    events: list[Event] = list(prepared)
    if not raws:
        state, evs = _unparseable(state, Strategy.I1, choice.form)
        return state, (*events, *evs)
    parent = state.current_id
    for raw in raws[:n]:
        state, evs, prepared = prepare_candidate(
            state, env, raw, strategy=Strategy.I1, parent_id=parent, forms=forms, feedback=fb
        )
        events.extend(evs)
        if prepared is None:
            continue
        sub = Submission(
            candidate_id=prepared.candidate_id, strategy=Strategy.I1, form=prepared.form,
            theme=prepared.theme, exclude=_exclusions(fb, forms, prepared, by_form=env.config.exclude_by_form),
        )
        state, evs, _ = evaluate_candidate(state, env, sub, rng)
        events.extend(evs)
    return state, tuple(events)


def _rank(
    state: State, env: Env, reference: str, drafts: list[Prepared], strategy: Strategy
) -> tuple[State, list[Event], tuple[float, ...] | None, float]:
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
        return state, events, None, 0.0
    ref_score = mean_score(state, reference, ids)
    return state, events, tuple(mean_score(state, p.candidate_id, ids) for p in drafts), ref_score


def iterative_refinement(state: State, env: Env, rng: np.random.Generator, choice: OperatorChoice) -> Result:
    assert state.feedback is not None and choice.form is not None
    ref = state.refinement
    base = ref.intermediate_id or state.current_id
    events: list[Event] = []
    fb = state.feedback
    if base != state.current_id:
        # I2 critiques executions of the intermediate skill itself, not of s_t.
        state, charged, admitted = execute_groups(
            state, env, [(base, fb.batch_ids)], purpose=Purpose.REFINEMENT_FEEDBACK
        )
        events.extend(charged)
        if not admitted:
            return state, tuple(events)
        fb = build_feedback(
            task=env.task, skill_id=base, batch_ids=fb.batch_ids, ledger=state.ledger,
            samples=env.samples, max_failures=env.config.max_failures_shown,
            max_examples=env.config.max_solved_offered, train_order=env.train_ids,
        ).evolve(extras=fb.extras)  # the round's further blocks (released code), not s_t's failures
    forms = (choice.form,)
    prep, prepared = prepare_feedback(state, env, fb)
    events.extend(prepared)
    prompt = generation_prompt(
        skill_text=state.text(base), feedback=fb, forms=forms, n_candidates=1,
        max_edits=env.config.max_edits, intermediate=True, preparation=prep,
        budget=generation_budget(env),
    )
    (raws,) = generate(env, [(prompt, 0)])
    stepped = ref.stepped(base)
    if not raws:
        state, evs = _unparseable(state, Strategy.I2, choice.form)
        return _advance(state.evolve(refinement=stepped), (*events, *evs), base, False)
    state, evs, draft = prepare_candidate(
        state, env, raws[0], strategy=Strategy.I2, parent_id=base, forms=forms, feedback=fb
    )
    events.extend(evs)
    if draft is None:
        return _advance(state.evolve(refinement=stepped), tuple(events), base, False)
    state, evs, kept = smoke_drafts(state, env, base, [draft], Strategy.I2)
    events.extend(evs)
    if not kept:
        return _advance(state.evolve(refinement=stepped), tuple(events), base, False)
    state, evs, scores, base_score = _rank(state, env, base, [draft], Strategy.I2)
    events.extend(evs)
    if scores is None:
        return _advance(state.evolve(refinement=stepped), tuple(events), base, False)
    if env.config.i2_window is not None:  # released code: the draft waits for the window to fill
        events.append(DraftsRanked(
            round=state.round, strategy=Strategy.I2, reference_id=base, reference_score=base_score,
            candidate_ids=(draft.candidate_id,), scores=scores, submitted=(),
        ))
        state = state.evolve(refinement=stepped.ranked(base_score))
        state, evs = add_draft(state, env, rng, WindowDraft(
            candidate_id=draft.candidate_id, form=draft.form, theme=draft.theme, score=scores[0],
            reference_score=base_score,
            exclude=_exclusions(fb, forms, draft, state.ranking_ids,
                                by_form=env.config.exclude_by_form, strategy=Strategy.I2)))
        return state, (*events, *evs)
    submitted = scores[0] > base_score + 1e-12
    events.append(DraftsRanked(
        round=state.round, strategy=Strategy.I2, reference_id=base, reference_score=base_score,
        candidate_ids=(draft.candidate_id,), scores=scores,
        submitted=(draft.candidate_id,) if submitted else (),
    ))
    ranked = stepped.ranked(base_score)
    state = state.evolve(refinement=ranked)
    if not submitted:
        state, evs = _not_submitted(state, draft, Strategy.I2)
        return _advance(state, (*events, *evs), base, False)
    sub = Submission(
        candidate_id=draft.candidate_id, strategy=Strategy.I2, form=draft.form, theme=draft.theme,
        exclude=_exclusions(fb, forms, draft, state.ranking_ids,
                            by_form=env.config.exclude_by_form, strategy=Strategy.I2),
    )
    state, evs, evaluated = evaluate_candidate(state, env, sub, rng)
    events.extend(evs)
    if evaluated.entry.accepted:
        # Acceptance re-initialises refinement from the new current skill.
        return state, (*events, RefinementAdvanced(
            round=state.round, intermediate_id=state.current_id, steps=0, advanced=True))
    s_out = evaluated.screening
    advanced = s_out is not None and ranked.advances(
        s_out.stats.gain, s_out.threshold, env.config.i2_advance_band)
    if advanced:
        gain = s_out.stats.gain if s_out else None
        state = state.evolve(refinement=ranked.advanced(draft.candidate_id, gain, scores[0]))
        return _advance(state, tuple(events), draft.candidate_id, True)
    return _advance(state, tuple(events), base, False)


def _advance(state: State, events: tuple[Event, ...], intermediate: str, advanced: bool) -> Result:
    event = RefinementAdvanced(
        round=state.round, intermediate_id=intermediate, steps=state.refinement.steps, advanced=advanced
    )
    return state, (*events, event)


def parallel_sampling(state: State, env: Env, rng: np.random.Generator, choice: OperatorChoice) -> Result:
    fb = state.feedback
    assert fb is not None and choice.form is not None
    cfg = env.config
    forms = (choice.form,)
    prep, prepared = prepare_feedback(state, env, fb)  # one preparation for the K draws
    prompts = [
        (generation_prompt(
            skill_text=state.current_text, feedback=fb, forms=forms, n_candidates=1,
            max_edits=cfg.max_edits, draw=(k, cfg.i3_k), preparation=prep,
            budget=generation_budget(env),
        ), k)
        for k in range(cfg.i3_k)
    ]
    events: list[Event] = list(prepared)
    drafts: list[Prepared] = []
    parent = state.current_id
    for k, raws in enumerate(generate(env, prompts)):
        if not raws:
            state, evs = _unparseable(state, Strategy.I3, choice.form, draw=k)
            events.extend(evs)
            continue
        state, evs, prepared = prepare_candidate(
            state, env, raws[0], strategy=Strategy.I3, parent_id=parent, forms=forms, feedback=fb, draw=k
        )
        events.extend(evs)
        if prepared is not None:
            drafts.append(prepared)
    state, evs, drafts = smoke_drafts(state, env, parent, drafts, Strategy.I3)
    events.extend(evs)
    if not drafts:
        return state, tuple(events)
    state, evs, scores, ref_score = _rank(state, env, parent, drafts, Strategy.I3)
    events.extend(evs)
    if scores is None:
        return state, tuple(events)
    picks = pick_submissions(scores, ref_score, slack=cfg.i3_runner_up_slack, max_submit=cfg.i3_submit_max)
    events.append(DraftsRanked(
        round=state.round, strategy=Strategy.I3, reference_id=parent, reference_score=ref_score,
        candidate_ids=tuple(p.candidate_id for p in drafts), scores=scores,
        submitted=tuple(drafts[i].candidate_id for i in picks),
    ))
    for i, p in enumerate(drafts):
        if i not in picks:
            state, evs = _not_submitted(state, p, Strategy.I3)
            events.extend(evs)
    for i in picks:
        p = drafts[i]
        sub = Submission(
            candidate_id=p.candidate_id, strategy=Strategy.I3, form=p.form, theme=p.theme,
            exclude=_exclusions(fb, forms, p, state.ranking_ids, by_form=cfg.exclude_by_form,
                                strategy=Strategy.I3),
        )
        state, evs, _ = evaluate_candidate(state, env, sub, rng)
        events.extend(evs)
    return state, tuple(events)


RUNNERS = {
    Strategy.I1: direct_revision,
    Strategy.I2: iterative_refinement,
    Strategy.I3: parallel_sampling,
}
