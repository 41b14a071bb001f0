"""Target executions through the ledger and the budget.

A group of (skill, sample) pairs is admitted whole or not at all; pairs already in the ledger
cost nothing; everything admitted goes to the model in one `llm.complete` call, so the shell
can run it concurrently.
"""

from __future__ import annotations

from collections.abc import Sequence

from stratune_core.budget import admit
from stratune_core.context import Env
from stratune_core.enums import Purpose
from stratune_core.events import ExecutionsCharged
from stratune_core.records import Execution, is_solved
from stratune_core.state import State

Group = tuple[str, Sequence[str]]  # (skill id, sample ids)


def execute_groups(
    state: State,
    env: Env,
    groups: Sequence[Group],
    *,
    purpose: Purpose,
    use_reserve: bool = False,
) -> tuple[State, tuple[ExecutionsCharged, ...], bool]:
    """Run every missing pair of `groups`; returns (state, events, admitted)."""
    pairs = [(sid, x) for sid, ids in groups for x in ids]
    admission = admit(state.budget, state.ledger, pairs, use_reserve=use_reserve)
    if not admission.admitted:
        return state, (), False
    if admission.cost == 0:
        return state, (), True
    requests = []
    spans = []
    for sid, x in admission.pairs:
        reqs = env.task.requests(state.text(sid), env.samples[x], env.config.target_model)
        spans.append((len(requests), len(reqs)))
        requests.extend(reqs)
    responses = env.llm.complete(requests) if requests else ()
    executions = []
    for (sid, x), (start, count) in zip(admission.pairs, spans, strict=True):
        score = env.task.score(env.samples[x], tuple(responses[start : start + count]))
        executions.append(
            Execution(
                skill_id=sid,
                sample_id=x,
                score=score.value,
                solved=is_solved(score.value, env.threshold),
                output=score.output,
                summary=score.summary,
            )
        )
    budget = state.budget.charge(admission.cost, use_reserve=use_reserve)
    state = state.evolve(ledger=state.ledger.add(executions), budget=budget)
    distinct = len(dict.fromkeys(pairs))
    event = ExecutionsCharged(
        round=state.round,
        purpose=purpose,
        skill_ids=tuple(dict.fromkeys(sid for sid, _ in groups)),
        new=admission.cost,
        reused=distinct - admission.cost,
        spent=budget.spent,
    )
    return state, (event,), True


def mean_score(state: State, skill_id: str, sample_ids: Sequence[str]) -> float:
    if not sample_ids:
        return 0.0
    scores = state.ledger.scores(skill_id, sample_ids)
    return sum(scores) / len(scores)
