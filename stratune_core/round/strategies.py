"""The three search strategies (paper §3.1, App. A.1).

I1 direct revision: the optimizer picks forms and writes candidates from s_t.
I2 iterative refinement: one step on the intermediate skill s~, ranked against s~.
I3 parallel sampling: K draws under one form, ranked on the shared subset, best (+ runner-up).
Each candidate goes to candidate evaluation as soon as it can be submitted.
"""

from __future__ import annotations

import numpy as np

from stratune_core.config.operators import available_forms
from stratune_core.feedback.execution import Feedback, build_feedback
from stratune_core.operators.refinement import WindowDraft
from stratune_core.prompts.templates import generation_prompt
from stratune_core.records.enums import Form, Purpose, Reason, Strategy, Verdict
from stratune_core.round.candidate_eval import Submission, evaluate_candidate
from stratune_core.round.candidates import Prepared, prepare_candidate
from stratune_core.round.draft_ranking import rank_drafts, submits
from stratune_core.round.execute import execute_groups
from stratune_core.round.generation import generate, generation_budget, pick
from stratune_core.round.i2_window import add_draft
from stratune_core.round.i3_submission import pick_submissions
from stratune_core.round.prep import prepare_feedback
from stratune_core.round.ranking_smoke import smoke_drafts
from stratune_core.state.candidate_events import (
    CandidateDecided,
    CandidateInvalid,
    DraftsRanked,
    RefinementAdvanced,
)
from stratune_core.state.context import Env
from stratune_core.state.history import HistoryEntry, OperatorChoice
from stratune_core.state.state import State
from stratune_core.state.trail import Result, Trail


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
    forms = (choice.form,) if choice.form is not None else available_forms(
        env.config.forms, fb, state.resting_form)
    n = env.config.n_candidates_i1
    prep, prepared = prepare_feedback(state, env, fb)
    prompt = generation_prompt(
        skill_text=state.current_text, feedback=fb, forms=forms, n_candidates=n,
        max_edits=env.config.max_edits, preparation=prep, budget=generation_budget(env),
        markup=env.answer_markup, placeholders=env.placeholders,
    )
    (raws,) = generate(env, [(prompt, 0)])
    trail = Trail(state, list(prepared))
    if not raws:
        trail.add(_unparseable(state, Strategy.I1, choice.form))
        return trail.result()
    parent = state.current_id
    for raw in pick(raws, n):
        candidate = trail.take(prepare_candidate(
            trail.state, env, raw, strategy=Strategy.I1, parent_id=parent, forms=forms, feedback=fb
        ))
        if candidate is None:
            continue
        sub = Submission(
            candidate_id=candidate.candidate_id, strategy=Strategy.I1, form=candidate.form,
            theme=candidate.theme,
            exclude=_exclusions(fb, forms, candidate, by_form=env.config.exclude_by_form),
        )
        trail.take(evaluate_candidate(trail.state, env, sub, rng))
    return trail.result()


def _base_feedback(trail: Trail, env: Env, base: str) -> Feedback | None:
    """What I2 critiques: the executions of the intermediate skill itself on the round's batch,
    not those of s_t (None: they cannot be paid for)."""
    fb = trail.state.feedback
    assert fb is not None
    if base == trail.state.current_id:
        return fb
    if not trail.take(execute_groups(trail.state, env, [(base, fb.batch_ids)],
                                     purpose=Purpose.REFINEMENT_FEEDBACK)):
        return None
    return build_feedback(
        task=env.task, skill_id=base, batch_ids=fb.batch_ids, ledger=trail.state.ledger,
        samples=env.samples, max_failures=env.config.max_failures_shown,
        max_examples=env.config.max_solved_offered, train_order=env.train_ids,
    ).evolve(extras=fb.extras)  # the round's further blocks (released code), not s_t's failures


def _ranked_draft(trail: Trail, env: Env, base: str, fb: Feedback,
                  form: Form) -> tuple[Prepared, float, float] | None:
    """One I2 step on `base`: the draft written, checked, smoke-tested and ranked against
    `base` (the draft, its score, the reference's), or None where it got no further."""
    prep, prepared = prepare_feedback(trail.state, env, fb)
    trail.emit(*prepared)
    prompt = generation_prompt(
        skill_text=trail.state.text(base), feedback=fb, forms=(form,), n_candidates=1,
        max_edits=env.config.max_edits, intermediate=True, preparation=prep,
        budget=generation_budget(env), markup=env.answer_markup, placeholders=env.placeholders,
    )
    (raws,) = generate(env, [(prompt, 0)])
    if not raws:
        trail.add(_unparseable(trail.state, Strategy.I2, form))
        return None
    draft = trail.take(prepare_candidate(trail.state, env, pick(raws, 1)[0], strategy=Strategy.I2,
                                         parent_id=base, forms=(form,), feedback=fb))
    if draft is None or not trail.take(smoke_drafts(trail.state, env, base, [draft],
                                                    Strategy.I2)):
        return None
    ranking = trail.take(rank_drafts(trail.state, env, base, [draft], Strategy.I2))
    if ranking is None:
        return None
    (score,), base_score = ranking
    return draft, score, base_score


def iterative_refinement(state: State, env: Env, rng: np.random.Generator, choice: OperatorChoice) -> Result:
    assert state.feedback is not None and choice.form is not None
    base = state.refinement.intermediate_id or state.current_id
    stepped = state.refinement.stepped(base)
    trail = Trail(state)
    fb = _base_feedback(trail, env, base)
    if fb is None:
        return trail.result()
    forms = (choice.form,)
    ranked_draft = _ranked_draft(trail, env, base, fb, choice.form)
    if ranked_draft is None:
        trail.state = trail.state.evolve(refinement=stepped)
        return _advance(trail, base, False)
    draft, score, base_score = ranked_draft
    exclude = _exclusions(fb, forms, draft, trail.state.ranking_ids,
                          by_form=env.config.exclude_by_form, strategy=Strategy.I2)
    windowed = env.config.i2_window is not None  # released: the draft waits for the window
    submitted = not windowed and submits(score, base_score)
    trail.emit(DraftsRanked(
        round=trail.state.round, strategy=Strategy.I2, reference_id=base,
        reference_score=base_score, candidate_ids=(draft.candidate_id,), scores=(score,),
        submitted=(draft.candidate_id,) if submitted else (),
        sample_ids=trail.state.ranking_ids,
    ))
    ranked = stepped.ranked(base_score)
    trail.state = trail.state.evolve(refinement=ranked)
    if windowed:
        trail.add(add_draft(trail.state, env, rng, WindowDraft(
            candidate_id=draft.candidate_id, form=draft.form, theme=draft.theme, score=score,
            reference_score=base_score, exclude=exclude)))
        return trail.result()
    if not submitted:
        trail.add(_not_submitted(trail.state, draft, Strategy.I2))
        return _advance(trail, base, False)
    sub = Submission(candidate_id=draft.candidate_id, strategy=Strategy.I2, form=draft.form,
                     theme=draft.theme, exclude=exclude)
    evaluated = trail.take(evaluate_candidate(trail.state, env, sub, rng))
    if evaluated.entry.accepted:
        # Acceptance re-initialises refinement from the new current skill.
        trail.emit(RefinementAdvanced(round=trail.state.round,
                                      intermediate_id=trail.state.current_id, steps=0,
                                      advanced=True))
        return trail.result()
    s_out = evaluated.screening
    if s_out is not None and ranked.advances(s_out.stats.gain, s_out.threshold,
                                             env.config.i2_advance_band):
        trail.state = trail.state.evolve(
            refinement=ranked.advanced(draft.candidate_id, s_out.stats.gain, score))
        return _advance(trail, draft.candidate_id, True)
    return _advance(trail, base, False)


def _advance(trail: Trail, intermediate: str, advanced: bool) -> Result:
    trail.emit(RefinementAdvanced(round=trail.state.round, intermediate_id=intermediate,
                                  steps=trail.state.refinement.steps, advanced=advanced))
    return trail.result()


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
            budget=generation_budget(env), markup=env.answer_markup, placeholders=env.placeholders,
        ), k)
        for k in range(cfg.i3_k)
    ]
    trail = Trail(state, list(prepared))
    drafts: list[Prepared] = []
    parent = state.current_id
    for k, raws in enumerate(generate(env, prompts)):
        if not raws:
            trail.add(_unparseable(trail.state, Strategy.I3, choice.form, draw=k))
            continue
        draft = trail.take(prepare_candidate(trail.state, env, pick(raws, 1)[0], strategy=Strategy.I3,
                                             parent_id=parent, forms=forms, feedback=fb, draw=k))
        if draft is not None:
            drafts.append(draft)
    drafts = trail.take(smoke_drafts(trail.state, env, parent, drafts, Strategy.I3))
    if not drafts:
        return trail.result()
    ranking = trail.take(rank_drafts(trail.state, env, parent, drafts, Strategy.I3))
    if ranking is None:
        return trail.result()
    scores, ref_score = ranking
    picks = pick_submissions(scores, ref_score, slack=cfg.i3_runner_up_slack, max_submit=cfg.i3_submit_max)
    trail.emit(DraftsRanked(
        round=trail.state.round, strategy=Strategy.I3, reference_id=parent,
        reference_score=ref_score, candidate_ids=tuple(p.candidate_id for p in drafts),
        scores=scores, submitted=tuple(drafts[i].candidate_id for i in picks),
        sample_ids=trail.state.ranking_ids,
    ))
    for i, p in enumerate(drafts):
        if i not in picks:
            trail.add(_not_submitted(trail.state, p, Strategy.I3))
    for i in picks:
        p = drafts[i]
        sub = Submission(
            candidate_id=p.candidate_id, strategy=Strategy.I3, form=p.form, theme=p.theme,
            exclude=_exclusions(fb, forms, p, trail.state.ranking_ids,
                                by_form=cfg.exclude_by_form, strategy=Strategy.I3),
        )
        trail.take(evaluate_candidate(trail.state, env, sub, rng))
    return trail.result()


RUNNERS = {
    Strategy.I1: direct_revision,
    Strategy.I2: iterative_refinement,
    Strategy.I3: parallel_sampling,
}
