"""A baseline's target executions, through the same ledger and budget as StraTune's.

Admission control as in `stratune_core/budget/admission.py`: a group is run whole or not at all, a pair
already in the ledger is free, and every unit charged is attributed to a sample and a purpose in
a `TargetExecuted` event, so the events alone account for every execution of the run.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from llm_cache.records import Request, Response
from stratune_core.budget.admission import admit
from stratune_core.methods.state import MethodState
from stratune_core.records.base import Execution, Sample, Score, is_solved
from stratune_core.records.method_events import ExecutionsRefused, SkillScored, TargetExecuted
from stratune_core.records.purposes import MethodPurpose
from stratune_core.state.context import Env
from stratune_core.state.events import Event
from stratune_core.tasks.executions import RequestEdit, run_jobs


@attrs.frozen(kw_only=True)
class Run:
    """One sample's execution with the model calls behind it (a method that revises an answer
    continues them)."""

    sample: Sample
    requests: tuple[Request, ...]
    responses: tuple[Response, ...]
    score: Score


def run_samples(env: Env, skill: str, samples: Sequence[Sample],
                edit: RequestEdit | None = None) -> tuple[Run, ...]:
    """Execute `skill` on each sample (`tasks/executions.py`: every wave of calls in one
    `llm.complete`, run concurrently by the shell); `edit` changes each request first
    (a method's own sampling settings)."""
    calls = run_jobs(env.task, env.llm, env.config.target_model, [(skill, s) for s in samples],
                     edit)
    return tuple(Run(sample=s, requests=c.requests, responses=c.responses,
                     score=env.task.score(s, c.responses))
                 for s, c in zip(samples, calls, strict=True))


def execute(state: MethodState, env: Env, skill_id: str, sample_ids: Sequence[str], *,
            purpose: MethodPurpose, edit: RequestEdit | None = None,
            ) -> tuple[MethodState, tuple[Event, ...], tuple[Run, ...] | None]:
    """Run `skill_id` on the samples it has not run yet. None as runs: refused, nothing spent
    (a `ExecutionsRefused` event says why); else the runs made now (pairs in the ledger are
    reused and not run again)."""
    pairs = [(skill_id, x) for x in sample_ids]
    admission = admit(state.budget, state.ledger, pairs)
    if not admission.admitted:
        return state, (ExecutionsRefused(round=state.round, purpose=purpose,
                                         needed=admission.cost,
                                         remaining=state.budget.remaining),), None
    if admission.cost == 0:
        return state, (), ()
    new_ids = [x for _, x in admission.pairs]
    runs = run_samples(env, state.text(skill_id), [env.samples[x] for x in new_ids], edit)
    executions = [
        Execution(skill_id=skill_id, sample_id=run.sample.id, score=run.score.value,
                  solved=is_solved(run.score.value, env.threshold), output=run.score.output,
                  summary=run.score.summary)
        for run in runs
    ]
    budget = state.budget.charge(admission.cost)
    state = state.evolve(ledger=state.ledger.add(executions), budget=budget)
    event = TargetExecuted(round=state.round, purpose=purpose, skill_id=skill_id,
                           sample_ids=new_ids, reused=len(dict.fromkeys(sample_ids)) - len(new_ids),
                           spent=budget.spent)
    return state, (event,), runs


def scored(state: MethodState, env: Env, skill_id: str, sample_ids: Sequence[str], *,
           purpose: MethodPurpose) -> tuple[float, SkillScored]:
    """The mean score of a skill on samples it has run (read from the ledger), as an event."""
    scores = state.ledger.scores(skill_id, sample_ids)
    mean = sum(scores) / len(scores) if scores else 0.0
    solved = sum(is_solved(s, env.threshold) for s in scores)
    return mean, SkillScored(round=state.round, skill_id=skill_id, purpose=purpose,
                             n=len(scores), mean=mean, solved=solved)
