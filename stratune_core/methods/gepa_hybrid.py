"""GEPA's candidate generation inside StraTune's rounds (Table 4's GEPA hybrid): its reflective
prompt mutation (the `gepa` package's default reflection template and its reading of the reply)
on a minibatch of 3 drawn from the batch with the round's rng. As in GEPA, a minibatch solved
throughout proposes nothing. GEPA's Pareto pool and its minibatch-then-full evaluation are not
used: StraTune's candidate evaluation takes their place."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from llm_cache.records import CallKind
from stratune_core.methods.gepa_adapter import require_gepa
from stratune_core.methods.gepa_prompts import REFLECTION_SYSTEM, record
from stratune_core.methods.proposal import Proposal
from stratune_core.prompts.optimizer import ask, optimizer_request
from stratune_core.records.base import Execution
from stratune_core.records.enums import Form
from stratune_core.records.method_spec import GepaMethod
from stratune_core.state.context import Env
from stratune_core.state.state import State


def propose(env: Env, state: State, executions: Sequence[Execution],
            rng: np.random.Generator) -> Proposal:
    require_gepa()
    from gepa.strategies.instruction_proposal import InstructionProposalSignature as signature
    size = min(GepaMethod().minibatch, len(executions))
    picked = [executions[i] for i in rng.choice(len(executions), size=size, replace=False)]
    shown = tuple(e.sample_id for e in picked)
    if all(e.score >= 1.0 for e in picked):  # GEPA skips a minibatch it already solves
        return Proposal(text=None, shown=shown, form=Form.F4, detail="minibatch already perfect")
    prompt = signature.prompt_renderer({"current_instruction_doc": state.current_text,
                                        "dataset_with_feedback": [record(env, e) for e in picked],
                                        "prompt_template": None})
    reply = ask(env, [optimizer_request(env, str(prompt), kind=CallKind.CANDIDATE_GENERATION,
                                        system=REFLECTION_SYSTEM)])[0]
    text = signature.output_extractor(reply.strip())["new_instruction"]
    if not text.strip():
        return Proposal(text=None, shown=shown, form=Form.F4, detail="no instruction in the reply")
    return Proposal(text=text, shown=shown, form=Form.F4)
