"""The released code's I2 submission window (4 drafts, 2 seats, -0.02 slack, the end-of-run
flush), the refinement kept when an I1/I3 candidate is accepted, and verified fixes."""

from __future__ import annotations

import pytest

import stratune_core.state.events as ev
from llm_cache.records import CallKind
from stratune_core.config.knobs import Config
from stratune_core.config.mechanisms import I2Window
from stratune_core.config.profiles import released
from stratune_core.operators.refinement import Refinement, WindowDraft
from stratune_core.records.enums import Form, Strategy, Verdict
from stratune_core.records.errors import ConfigError
from stratune_core.round.candidate_eval import Submission, evaluate_candidate
from stratune_core.round.i2_window import add_draft, flush_window
from stratune_core.round.run import run
from stratune_core.round.verified_fixes import gist
from stratune_core.state.context import Env
from stratune_core.state.state import initial_state, round_rng
from tests.support.toy import BAD_RULES, INITIAL_SKILL, LUCKY_RULE, RULES, InProcessLLM, ToyTask
from tests.test_released_round import RELEASED


def _window(config: Config, drafts: list[tuple[str, float, float]]):
    """A state whose I2 window holds `drafts` (skill text, ranking score, s~'s score)."""
    task = ToyTask()
    state = initial_state(config, task)
    env = Env.build(config, task, InProcessLLM())
    window = []
    for text, score, reference in drafts:
        state, sid, _ = state.with_skill(f"{INITIAL_SKILL}\n{text}", state.current_id)
        window.append(WindowDraft(candidate_id=sid, form=Form.F1, theme=text[:20], score=score,
                                  reference_score=reference, exclude=state.batches[0]))
    ref = Refinement(started=True, steps=len(drafts), intermediate_id=state.current_id)
    return state.evolve(refinement=_with(ref, window[:-1]), round=5), env, window  # last: to add


def _with(ref: Refinement, drafts) -> Refinement:
    for d in drafts:
        ref = ref.waiting(d)
    return ref


def _decided(events) -> dict[str, Verdict]:
    return {e.candidate_id: e.verdict for e in events if isinstance(e, ev.CandidateDecided)}


def test_a_full_window_submits_its_best_two_within_the_slack():
    config = Config(i2_window=True)
    state, env, window = _window(config, [
        (BAD_RULES["U"], 0.45, 0.50),  # second best, but more than 0.02 below s~: set aside
        (LUCKY_RULE, 0.20, 0.10),
        (RULES["U"], 0.60, 0.50),  # the best
        (RULES["R"], 0.30, 0.50),
    ])
    state, events = add_draft(state, env, round_rng(0, 5), window[-1])
    (submitted,) = [e for e in events if isinstance(e, ev.WindowSubmitted)]
    assert submitted.candidate_ids == tuple(window[i].candidate_id for i in (2, 0, 3, 1))
    assert submitted.submitted == (window[2].candidate_id,) and not submitted.flush
    decided = _decided(events)
    assert [decided[d.candidate_id] for d in window[:2] + window[3:]] == [Verdict.NOT_SUBMITTED] * 3
    assert decided[window[2].candidate_id] is not Verdict.NOT_SUBMITTED
    assert state.refinement.window == ()
    assert [e for e in events if isinstance(e, ev.StageResult)]  # evaluated for real


def test_a_window_waits_until_it_holds_its_drafts():
    state, env, window = _window(Config(i2_window=True), [(RULES["U"], 0.6, 0.5)])
    state, events = add_draft(state, env, round_rng(0, 5), window[0])
    assert len(state.refinement.window) == 1
    assert [type(e) for e in events] == [ev.RefinementAdvanced] and not events[0].advanced


def test_an_accepted_seat_restarts_refinement_and_the_other_seat_waits_no_more():
    state, env, window = _window(Config(i2_window=I2Window(drafts=2)), [
        (RULES["U"], 0.6, 0.5), (RULES["R"], 0.55, 0.5)])
    state, events = add_draft(state, env, round_rng(0, 5), window[-1])
    assert [e.current_id for e in events if isinstance(e, ev.SkillReplaced)] == [
        window[0].candidate_id]
    assert _decided(events)[window[1].candidate_id] is Verdict.NOT_SUBMITTED
    assert not state.refinement.started  # I2's own acceptance restarts it
    assert events[-1] == ev.RefinementAdvanced(round=5, intermediate_id=window[0].candidate_id,
                                               steps=0, advanced=True)


def test_the_flush_submits_the_best_of_two_or_more_pending_drafts():
    drafts = [(LUCKY_RULE, 0.2, 0.1), (RULES["S"], 0.3, 0.1), (RULES["D"], 0.1, 0.1)]
    state, env, window = _window(Config(i2_window=True), drafts)
    state = state.evolve(refinement=_with(state.refinement, window[-1:]))
    state, events = flush_window(state, env, round_rng(0, 5, 2))
    (flushed,) = [e for e in events if isinstance(e, ev.WindowSubmitted)]
    assert flushed.flush and flushed.submitted == (window[1].candidate_id,)
    one, env, _ = _window(Config(i2_window=True), drafts[:2])  # a single pending draft stays
    assert flush_window(one, env, round_rng(0, 5, 2)) == (one, ())
    off, env, _ = _window(Config(), drafts)
    assert flush_window(off, env, round_rng(0, 5, 2)) == (off, ())


def test_i2_rounds_fill_windows_of_four_under_the_released_profile():
    result = run(released().replace(seed=1, selector="fixed:I2"), ToyTask(), InProcessLLM())
    ranked = [e for e in result.events if isinstance(e, ev.DraftsRanked)]
    windows = [e for e in result.events if isinstance(e, ev.WindowSubmitted)]
    assert ranked and all(e.submitted == () for e in ranked)
    full = [w for w in windows if not w.flush]
    assert full and all(len(w.candidate_ids) == 4 and len(w.submitted) <= 2 for w in full)
    for w in windows:
        for cid, score, reference in zip(w.candidate_ids, w.scores, w.reference_scores,
                                         strict=True):
            assert (cid in w.submitted) <= (score >= reference - 0.02)
    assert result.spent <= result.budget


# --- the refinement kept on acceptance -------------------------------------------------------

def test_an_i1_or_i3_acceptance_keeps_the_intermediate_skill_when_released():
    ref = Refinement(started=True, steps=3, intermediate_id="s~", base_gain=0.02,
                     window=(WindowDraft(candidate_id="d", form=None, theme="", score=0.1,
                                         reference_score=0.0, exclude=()),))
    for strategy in (Strategy.I1, Strategy.I3):
        kept = ref.after_acceptance(strategy, keep=True)
        assert (kept.intermediate_id, kept.steps, kept.window) == ("s~", 3, ref.window)
        assert kept.base_gain is None  # its gains were measured against the old s_t
        assert ref.after_acceptance(strategy, keep=False) == Refinement()
    assert ref.after_acceptance(Strategy.I2, keep=True) == Refinement()
    assert Refinement().after_acceptance(Strategy.I1, keep=True) == Refinement()


@pytest.mark.parametrize("keep", [True, False])
def test_accepting_an_i1_candidate_keeps_or_restarts_refinement(keep):
    config = Config(keep_refinement_on_accept=keep)
    state, env, window = _window(config, [(RULES["D"], 0.0, 0.0), (RULES["U"], 0.0, 0.0)])
    intermediate = window[0].candidate_id
    state = state.evolve(refinement=Refinement(started=True, steps=2, intermediate_id=intermediate,
                                               base_gain=0.01))
    sub = Submission(candidate_id=window[1].candidate_id, strategy=Strategy.I1, form=Form.F1,
                     theme="u rule", exclude=frozenset(state.batches[0]))
    state, events, evaluated = evaluate_candidate(state, env, sub, round_rng(0, 5))
    assert evaluated.entry.accepted and state.current_id == sub.candidate_id
    kept = [e for e in events if isinstance(e, ev.RefinementKept)]
    if keep:
        assert kept == [ev.RefinementKept(round=5, accepted_id=sub.candidate_id,
                                          intermediate_id=intermediate, steps=2)]
        assert state.refinement.intermediate_id == intermediate  # the next I2 step refines it
        assert state.refinement.base_gain is None
    else:
        assert not kept and state.refinement == Refinement()


@pytest.fixture(scope="module")
def full_run():
    llm = InProcessLLM()
    return run(RELEASED, ToyTask(), llm), llm


# --- verified fixes --------------------------------------------------------------------------

def test_the_first_failures_carry_the_blind_solve(full_run):
    result, llm = full_run
    prepared = {(e.round, e.skill_id): e for e in result.events
                if isinstance(e, ev.FeedbackPrepared)}
    fixes = [e for e in result.events if isinstance(e, ev.FixesAnnotated)]
    assert fixes
    for e in fixes:
        prep = prepared[(e.round, e.skill_id)]
        assert set(e.verified) <= set(prep.verified)
        assert len(e.verified) + len(e.unverified) <= RELEASED.verified_fixes.k
    prompts = "\n".join(r.messages[0].text() for r in llm.calls
                        if r.kind is CallKind.CANDIDATE_GENERATION)
    assert "VERIFIED FIX (the optimizer solved this sample blind and the task's scorer " \
           "accepted its answer): <answer>" in prompts
    assert "(fix attempt unverified: the scorer did not accept" in prompts


def test_verified_fixes_need_feedback_preparation():
    with pytest.raises(ConfigError, match="^verified_fixes: .*feedback_preparation"):
        Config(verified_fixes=True, feedback_preparation=False)


def test_a_gist_is_the_end_of_the_answer():
    answer = "\n".join(f"line {i}" for i in range(10)) + "\n\nANSWER: C\n"
    assert gist(answer) == "line 5 / line 6 / line 7 / line 8 / line 9 / ANSWER: C"
    long = gist("x" * 1000)
    assert len(long) == 400 and long.startswith("…")
