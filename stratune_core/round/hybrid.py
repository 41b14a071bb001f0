"""Table 4's hybrids (paper App. "Baseline Settings", the paragraph on the hybrids): another
method writes the round's candidate, and StraTune's candidate evaluation, saved candidates and
final selection do the rest under the same budget.

The generator sees the current skill and its executions on the round's batch (what the round
has already paid for) and writes one candidate whose parent is the current skill: each method's
way is its entry's `propose` (`methods/<m>_hybrid.py`), found by the run's `Generator`.
StraTune's operator choice is not made, and its checks of a revision form do not apply (the
candidate is a whole skill text, submitted as a direct revision of the current skill).
"""

from __future__ import annotations

import numpy as np

from stratune_core.methods.baselines import generator_entry
from stratune_core.records.enums import Strategy
from stratune_core.records.method_events import GeneratorProposed
from stratune_core.records.parts import check_parts_kept, check_placeholders_kept
from stratune_core.round.candidate_eval import Submission, evaluate_candidate
from stratune_core.state.candidate_events import CandidateGenerated
from stratune_core.state.context import Env
from stratune_core.state.events import Event, SkillAdded
from stratune_core.state.state import State

Result = tuple[State, tuple[Event, ...]]


def hybrid_generation(state: State, env: Env, rng: np.random.Generator) -> Result:
    assert state.feedback is not None and env.generator is not None
    parent = state.current_id
    batch = state.feedback.batch_ids
    executions = tuple(e for e in (state.ledger.get(parent, x) for x in batch) if e is not None)
    propose = generator_entry(env.generator).propose
    assert propose is not None, f"{env.generator.value}: its entry has no candidate generation"
    made = propose(env, state, executions, rng)

    def nothing(detail: str) -> Result:
        return state, (GeneratorProposed(round=state.round, generator=env.generator,
                                         sample_ids=made.shown, detail=detail),)

    if made.text is None:
        return nothing(made.detail)
    if (changed := check_parts_kept(state.current_text, made.text)) is not None:
        return nothing(changed)
    if (dropped := check_placeholders_kept(made.text, env.placeholders)) is not None:
        return nothing(dropped)
    state, cid, is_new = state.with_skill(made.text, parent)
    if not is_new:
        return nothing("the current skill unchanged" if cid == parent
                       else f"skill {cid} seen before")
    theme = f"{env.generator.value} proposal"
    events: list[Event] = [
        GeneratorProposed(round=state.round, generator=env.generator, sample_ids=made.shown,
                          candidate_id=cid),
        SkillAdded(skill_id=cid, text=made.text, parent_id=parent),
        CandidateGenerated(round=state.round, candidate_id=cid, parent_id=parent,
                           strategy=Strategy.I1, form=made.form, theme=theme),
    ]
    sub = Submission(candidate_id=cid, strategy=Strategy.I1, form=made.form, theme=theme,
                     exclude=frozenset(batch) | frozenset(made.shown))
    state, evaluated, _ = evaluate_candidate(state, env, sub, rng)
    return state, (*events, *evaluated)
