"""Iter-CoT's revision turns on the target: continued conversations sent in one batch and
scored (`answer`), and their budget charged per sample (`charge`), since a turn is not a
(skill, sample) pair of the ledger."""

from __future__ import annotations

from collections.abc import Sequence

from llm_cache.records import Request
from stratune_core.methods.executions import Run
from stratune_core.methods.state import MethodState
from stratune_core.records.base import Sample
from stratune_core.records.method_events import ExecutionsRefused, TargetExecuted
from stratune_core.records.purposes import MethodPurpose
from stratune_core.state.context import Env
from stratune_core.state.events import Event


def answer(env: Env, samples: Sequence[Sample],
           per_sample: Sequence[tuple[Request, ...]]) -> tuple[Run, ...]:
    """Send every sample's requests in one `llm.complete` and score each on its responses."""
    flat = [r for requests in per_sample for r in requests]
    responses = env.llm.complete(flat) if flat else ()
    out, start = [], 0
    for sample, requests in zip(samples, per_sample, strict=True):
        got = tuple(responses[start:start + len(requests)])
        start += len(requests)
        out.append(Run(sample=sample, requests=requests, responses=got,
                       score=env.task.score(sample, got)))
    return tuple(out)


def charge(state: MethodState, skill_id: str, sample_ids: Sequence[str], *,
           purpose: MethodPurpose) -> tuple[MethodState, tuple[Event, ...], bool]:
    """Charge one execution per id for calls that are not (skill, sample) pairs of the ledger
    (the revision turns). Admitted whole or refused."""
    if not state.budget.fits(len(sample_ids)):
        return state, (ExecutionsRefused(round=state.round, purpose=purpose,
                                         needed=len(sample_ids),
                                         remaining=state.budget.remaining),), False
    budget = state.budget.charge(len(sample_ids))
    event = TargetExecuted(round=state.round, purpose=purpose, skill_id=skill_id,
                           sample_ids=sample_ids, spent=budget.spent)
    return state.evolve(budget=budget), (event,), True
