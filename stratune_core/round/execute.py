"""Target executions through the ledger and the budget.

A group of (skill, sample) pairs is admitted whole or not at all; pairs already in the ledger
cost nothing; everything admitted goes to the model in one `llm.complete` call, so the shell
can run it concurrently.
"""

from __future__ import annotations

from collections.abc import Sequence

from stratune_core.budget.admission import admit
from stratune_core.records.base import Execution, Sample, Score, is_solved
from stratune_core.records.enums import Purpose
from stratune_core.records.llm import LLM
from stratune_core.records.task import Task
from stratune_core.round.reserve import refresh
from stratune_core.state.context import Env
from stratune_core.state.events import ExecutionsCharged
from stratune_core.state.state import State
from stratune_core.tasks.executions import run_jobs

Group = tuple[str, Sequence[str]]  # (skill id, sample ids)


def score_jobs(
    task: Task, llm: LLM, model: str, jobs: Sequence[tuple[str, Sample]]
) -> tuple[Score, ...]:
    """Run each (skill text, sample) as the task's calls (`tasks/executions.py`: every wave in
    one `llm.complete`, so the shell can run them concurrently), and score each sample on its
    own responses."""
    calls = run_jobs(task, llm, model, jobs)
    return tuple(task.score(sample, c.responses)
                 for (_, sample), c in zip(jobs, calls, strict=True))


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
    jobs = [(state.text(sid), env.samples[x]) for sid, x in admission.pairs]
    scores = score_jobs(env.task, env.llm, env.config.target_model, jobs)
    executions = [
        Execution(
            skill_id=sid,
            sample_id=x,
            score=score.value,
            solved=is_solved(score.value, env.threshold),
            output=score.output,
            summary=score.summary,
            aux=score.aux,
        )
        for (sid, x), score in zip(admission.pairs, scores, strict=True)
    ]
    budget = state.budget.charge(admission.cost, use_reserve=use_reserve)
    state = refresh(state.evolve(ledger=state.ledger.add(executions), budget=budget), env)
    distinct = len(dict.fromkeys(pairs))
    event = ExecutionsCharged(
        round=state.round,
        purpose=purpose,
        skill_ids=tuple(dict.fromkeys(sid for sid, _ in groups)),
        new=admission.cost,
        reused=distinct - admission.cost,
        spent=budget.spent,
        pairs=admission.pairs,
    )
    return state, (event,), True


def mean_score(state: State, skill_id: str, sample_ids: Sequence[str]) -> float:
    if not sample_ids:
        return 0.0
    scores = state.ledger.scores(skill_id, sample_ids)
    return sum(scores) / len(scores)
