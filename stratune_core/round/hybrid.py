"""Table 4's hybrids (paper App. "Baseline Settings", the paragraph on the hybrids): another
method writes the round's candidate, and StraTune's candidate evaluation, saved candidates and
final selection do the rest under the same budget.

The generator sees the current skill and its executions on the round's batch (what the round
has already paid for) and writes one candidate whose parent is the current skill:
- GEPA: its reflective prompt mutation (the `gepa` package's default reflection template and
  its reading of the reply) on a minibatch of 3 drawn from the batch with the round's rng. As
  in GEPA, a minibatch solved throughout proposes nothing. GEPA's Pareto pool and its
  minibatch-then-full evaluation are not used: candidate evaluation takes their place.
- SkillOpt: one step's edits (failure and success analysts on minibatches of 8, merged apart
  and then failure-first, ranked, clipped to the cosine edit budget) applied to the current
  skill; no slow update, no meta guidance, no gate of its own. The cosine runs over SkillOpt's
  planned steps as they would be over StraTune's batches (its epochs times the number of
  batches), round r (from 0) being step r + 1.
StraTune's operator choice is not made, and its checks of a revision form do not apply (the
candidate is a whole skill text, submitted as a direct revision of the current skill).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from attrs import frozen

from llm_cache.records import CallKind
from stratune_core.methods.gepa_prompts import REFLECTION_SYSTEM, record
from stratune_core.methods.gepa_run import require_gepa
from stratune_core.methods.skillopt_edits import edit_limit
from stratune_core.methods.skillopt_step import propose_edits
from stratune_core.prompts.optimizer import ask, optimizer_request
from stratune_core.records.base import Execution
from stratune_core.records.enums import Form, Strategy
from stratune_core.records.method_events import GeneratorProposed
from stratune_core.records.method_spec import Generator, GepaMethod, SkillOptMethod
from stratune_core.records.parts import check_parts_kept, check_placeholders_kept
from stratune_core.round.candidate_eval import Submission, evaluate_candidate
from stratune_core.state.candidate_events import CandidateGenerated
from stratune_core.state.context import Env
from stratune_core.state.events import Event, SkillAdded
from stratune_core.state.state import State

Result = tuple[State, tuple[Event, ...]]


@frozen(kw_only=True)
class Made:
    text: str | None  # None: nothing proposed
    shown: tuple[str, ...]  # the samples whose executions the generator saw
    form: Form | None
    detail: str = ""


def hybrid_generation(state: State, env: Env, rng: np.random.Generator) -> Result:
    assert state.feedback is not None and env.generator is not None
    parent = state.current_id
    batch = state.feedback.batch_ids
    executions = tuple(e for e in (state.ledger.get(parent, x) for x in batch) if e is not None)
    if env.generator is Generator.GEPA:
        made = _gepa(env, state.current_text, executions, rng)
    else:
        made = _skillopt(env, state, executions)
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


def _gepa(env: Env, skill: str, executions: Sequence[Execution],
          rng: np.random.Generator) -> Made:
    require_gepa()
    from gepa.strategies.instruction_proposal import InstructionProposalSignature as signature
    size = min(GepaMethod().minibatch, len(executions))
    picked = [executions[i] for i in rng.choice(len(executions), size=size, replace=False)]
    shown = tuple(e.sample_id for e in picked)
    if all(e.score >= 1.0 for e in picked):  # GEPA skips a minibatch it already solves
        return Made(text=None, shown=shown, form=Form.F4, detail="minibatch already perfect")
    prompt = signature.prompt_renderer({"current_instruction_doc": skill,
                                        "dataset_with_feedback": [record(env, e) for e in picked],
                                        "prompt_template": None})
    reply = ask(env, [optimizer_request(env, str(prompt), kind=CallKind.CANDIDATE_GENERATION,
                                        system=REFLECTION_SYSTEM)])[0]
    text = signature.output_extractor(reply.strip())["new_instruction"]
    if not text.strip():
        return Made(text=None, shown=shown, form=Form.F4, detail="no instruction in the reply")
    return Made(text=text, shown=shown, form=Form.F4)


def _skillopt(env: Env, state: State, executions: Sequence[Execution]) -> Made:
    spec = SkillOptMethod()
    total = spec.epochs * len(state.batches)
    limit = edit_limit(spec.edits_start, spec.edits_end, state.round + 1, total)
    made = propose_edits(env, state.current_text, executions, minibatch=spec.minibatch,
                         merge_group=spec.merge_group, limit=limit)
    shown = tuple(e.sample_id for e in executions)
    if made.applied == 0:
        return Made(text=None, shown=shown, form=None,
                    detail=f"no applicable edit ({made.proposed} proposed, limit {limit})")
    return Made(text=made.text, shown=shown, form=None)

