"""The candidate-generating part of one SkillOpt step, shared by SkillOpt itself and the
`--generator skillopt` hybrid: one analyst call per minibatch of failures or of successes, the
failure and success proposals merged apart and then failure-first, clipped to the step's edit
budget (ranked by score only when there are more than it allows, as the released trainer ranks
only then), applied to the skill outside its guidance section."""

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
    proposed: int  # 0: no analyst proposed anything, and the step uses no edit budget
    merged: int
    applied: int


def propose_edits(env: Env, skill: str, executions: Sequence[Execution], *, minibatch: int,
                  merge_group: int, limit: int, meta: str = "") -> Proposed:
    failed = chunks([e for e in executions if not e.solved], minibatch)
    solved = chunks([e for e in executions if e.solved], minibatch)
    replies = ask(env, [optimizer_request(env, analyst_prompt(skill, [render(env, e) for e in g],
                                                              failure, meta),
                                          kind=CallKind.REFLECTION, system=ANALYST_SYSTEM)
                        for failure, groups in ((True, failed), (False, solved)) for g in groups])
    found = [proposals(reply) for reply in replies]
    failures, successes = found[:len(failed)], found[len(failed):]
    merged = merge(env, skill, failures, successes, merge_group, meta) if any(found) else ()
    chosen = merged if len(merged) <= limit else top(merged, limit)
    text, applied = apply_selected(skill, chosen)
    return Proposed(text=text, proposed=sum(map(len, found)), merged=len(merged),
                    applied=applied)
