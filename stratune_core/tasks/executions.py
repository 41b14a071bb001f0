"""The model calls of target executions, for every kind of task.

An execution is the task's requests; for a task whose later calls depend on earlier replies
(`FollowUps` in `records/task.py`: a program of several LM calls), also the calls each reply leads to, wave by wave.
Every pending execution's next calls go to the model together in one `llm.complete` (so the
shell runs them concurrently); a task of one-wave executions makes exactly one such call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from attrs import frozen

from llm_cache.records import Request, Response
from stratune_core.records.base import Sample
from stratune_core.records.errors import TaskDataError
from stratune_core.records.llm import LLM
from stratune_core.records.task import Task, follow_ups_of

RequestEdit = Callable[[Request], Request]
# a program that keeps calling is stopped here rather than spending without end
MAX_WAVES = 64


@frozen
class Calls:
    """One execution's requests and the responses to them, in the order sent."""

    requests: tuple[Request, ...]
    responses: tuple[Response, ...]


def run_jobs(task: Task, llm: LLM, model: str, jobs: Sequence[tuple[str, Sample]],
             edit: RequestEdit | None = None) -> tuple[Calls, ...]:
    """Each (skill text, sample)'s calls; `edit` changes every request before it is sent."""

    def edited(requests: tuple[Request, ...]) -> tuple[Request, ...]:
        return tuple(edit(r) for r in requests) if edit is not None else requests

    follow = follow_ups_of(task)
    sent: list[list[Request]] = [[] for _ in jobs]
    got: list[list[Response]] = [[] for _ in jobs]
    wave = [edited(task.requests(skill, sample, model)) for skill, sample in jobs]
    for depth in range(MAX_WAVES + 1):
        flat = [request for requests in wave for request in requests]
        if not flat:
            break
        if depth == MAX_WAVES:
            stuck = next(s.id for (_, s), w in zip(jobs, wave, strict=True) if w)
            raise TaskDataError(f"sample {stuck}: one execution asked for more than "
                                f"{MAX_WAVES} rounds of model calls; bound the program's loop")
        replies = llm.complete(flat)
        start = 0
        for index, requests in enumerate(wave):
            sent[index].extend(requests)
            got[index].extend(replies[start:start + len(requests)])
            start += len(requests)
        if follow is None:
            break
        wave = [edited(follow(skill, sample, model, tuple(got[i]))) if wave[i] else ()
                for i, (skill, sample) in enumerate(jobs)]
    return tuple(Calls(requests=tuple(s), responses=tuple(g)) for s, g in zip(sent, got,
                                                                              strict=True))
