"""SkillOpt's candidate generation inside StraTune's rounds (Table 4's SkillOpt hybrid): one
step's edits (failure and success analysts on minibatches of 8, merged apart and then
failure-first, ranked, clipped to the cosine edit budget) applied to the current skill; no slow
update, no meta guidance, no gate of its own. The cosine runs over SkillOpt's planned steps as
they would be over StraTune's batches (its epochs times the number of batches), round r (from
0) being step r + 1."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from stratune_core.methods.proposal import Proposal
from stratune_core.methods.skillopt_edits import edit_limit
from stratune_core.methods.skillopt_step import propose_edits
from stratune_core.records.base import Execution
from stratune_core.records.method_spec import SkillOptMethod
from stratune_core.state.context import Env
from stratune_core.state.state import State


def propose(env: Env, state: State, executions: Sequence[Execution],
            rng: np.random.Generator) -> Proposal:
    del rng  # every execution of the batch is shown: nothing to draw
    spec = SkillOptMethod()
    total = spec.epochs * len(state.batches)
    limit = edit_limit(spec.edits_start, spec.edits_end, state.round + 1, total)
    made = propose_edits(env, state.current_text, executions, minibatch=spec.minibatch,
                         merge_group=spec.merge_group, limit=limit)
    shown = tuple(e.sample_id for e in executions)
    if made.applied == 0:
        return Proposal(text=None, shown=shown, form=None,
                        detail=f"no applicable edit ({made.proposed} proposed, limit {limit})")
    return Proposal(text=made.text, shown=shown, form=None)
