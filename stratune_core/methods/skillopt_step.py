"""The candidate-generating part of one SkillOpt step, shared by SkillOpt itself and the
`--generator skillopt` hybrid: one analyst call per minibatch of failures or of successes,
the proposals merged, ranked and clipped to the step's edit budget, applied to the skill."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from llm_cache.records import CallKind
from stratune_core.methods.skillopt_edits import apply_selected, merge, proposals, top
from stratune_core.methods.skillopt_prompts import ANALYST_SYSTEM, analyst_prompt
from stratune_core.methods.splits import chunks
from stratune_core.methods.trajectories import render
from stratune_core.prompts.optimizer import ask, optimizer_request
from stratune_core.records.base import Execution
from stratune_core.state.context import Env


@frozen(kw_only=True)
class Proposed:
    text: str  # the skill with the selected edits applied (the skill itself if none applied)
    proposed: int
    merged: int
    applied: int


def propose_edits(env: Env, skill: str, executions: Sequence[Execution], *, minibatch: int,
                  merge_group: int, limit: int, meta: str = "") -> Proposed:
    groups = [(True, g) for g in chunks([e for e in executions if not e.solved], minibatch)]
    groups += [(False, g) for g in chunks([e for e in executions if e.solved], minibatch)]
    replies = ask(env, [optimizer_request(env, analyst_prompt(skill, [render(env, e) for e in g],
                                                              failed, meta),
                                          kind=CallKind.REFLECTION, system=ANALYST_SYSTEM)
                        for failed, g in groups])
    found = tuple(p for reply in replies for p in proposals(reply))
    merged = merge(env, skill, found, merge_group) if found else ()
    text, applied = apply_selected(skill, top(merged, limit))
    return Proposed(text=text, proposed=len(found), merged=len(merged), applied=applied)
