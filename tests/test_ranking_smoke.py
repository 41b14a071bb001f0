"""The released ranking smoke: an I2/I3 draft runs first on 12 samples of the ranking subset
and is killed (not submitted, its other ranking executions never paid) when it scores under a
quarter of the reference's ranking score; a sound draft goes on to ranking. Off in the paper."""

from __future__ import annotations

import stratune_core.state.events as ev
from stratune_core.config.knobs import Config
from stratune_core.config.profiles import paper, released
from stratune_core.records.enums import Form, Reason, Strategy, Verdict
from stratune_core.round.candidates import Prepared
from stratune_core.round.ranking_smoke import smoke_drafts
from stratune_core.state.context import Env
from stratune_core.state.state import State, initial_state
from tests.support.toy import BAD_RULES, RULES, InProcessLLM, ToyTask

TASK = ToyTask(n_train=120)


def _setup(config: Config) -> tuple[State, Env, list[Prepared]]:
    env = Env.build(config, TASK, InProcessLLM())
    state = initial_state(config, TASK)
    learned = state.current_text + "\n" + "\n".join(RULES[m] for m in "URDS")
    state, ref, _ = state.with_skill(learned, state.current_id)
    state = state.evolve(current_id=ref)
    broken = learned + "\n" + BAD_RULES["U"] + "\n" + BAD_RULES["R"]  # right for no marker
    sound = learned + "\nKeep answers short."
    drafts = []
    for text in (broken, sound):
        state, cid, _ = state.with_skill(text, ref)
        drafts.append(Prepared(candidate_id=cid, form=Form.F1, theme="t", draw=len(drafts)))
    return state, env, drafts


def test_a_broken_draft_is_killed_on_the_smoke_samples():
    state, env, drafts = _setup(released().replace(seed=3))
    spent = state.budget.spent
    state, events, kept = smoke_drafts(state, env, state.current_id, drafts, Strategy.I3)
    assert kept == [drafts[1]]
    (killed,) = [e for e in events if isinstance(e, ev.RankingSmokeFailed)]
    assert killed.candidate_id == drafts[0].candidate_id and len(killed.sample_ids) == 12
    assert killed.score < 0.25 * killed.reference_score
    (decided,) = [e for e in events if isinstance(e, ev.CandidateDecided)]
    assert (decided.verdict, decided.reasons) == (Verdict.NOT_SUBMITTED, (Reason.SMOKE_BROKEN,))
    ranking = len(state.ranking_ids)
    assert state.budget.spent - spent == ranking + 2 * 12  # the reference, then 12 per draft


def test_the_paper_ranks_every_draft():
    state, env, drafts = _setup(paper().replace(seed=3))
    state, events, kept = smoke_drafts(state, env, state.current_id, drafts, Strategy.I3)
    assert kept == drafts and events == ()
