"""Executions of several dependent model calls (`FollowUps`, `tasks/executions.py`): each
wave of every pending execution goes to the model in one `llm.complete`, the replies reach the
scorer in order, and a one-wave task makes exactly one call, as before."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from llm_cache.records import Message, Request, Response, Role
from stratune_core.records.base import Sample, Score, TaskInfo
from stratune_core.records.errors import TaskDataError
from stratune_core.records.task import FollowUps, Task
from stratune_core.tasks import executions
from stratune_core.tasks.executions import run_jobs


def _request(text: str) -> Request:
    return Request(role=Role.TARGET, model="m", system="", max_tokens=8,
                   messages=(Message.user(text),))


class Chain:
    """Sample `n`: n calls, each asking for the previous reply plus one."""

    info = TaskInfo(name="chain", initial_skill="")

    def split(self, name: str) -> tuple[Sample, ...]:
        return ()

    def requests(self, skill: str, sample: Sample, model: str) -> tuple[Request, ...]:
        return (_request(f"{skill}:0"),) if sample.payload else ()

    def follow_ups(self, skill: str, sample: Sample, model: str,
                   responses: tuple[Response, ...]) -> tuple[Request, ...]:
        if len(responses) >= sample.payload:
            return ()
        return (_request(f"{skill}:{responses[-1].text}"),)

    def score(self, sample: Sample, responses: tuple[Response, ...]) -> Score:
        return Score(value=1.0, output=",".join(r.text for r in responses))

    def describe(self, sample: Sample) -> str:
        return ""

    def expected(self, sample: Sample) -> str:
        return ""


class OneWave(Chain):
    follow_ups = None  # type: ignore[assignment]


class Counting:
    def __init__(self) -> None:
        self.batches: list[int] = []

    def complete(self, requests: Sequence[Request]) -> tuple[Response, ...]:
        self.batches.append(len(requests))
        return tuple(Response(text=str(int(r.user_text().rpartition(":")[2]) + 1))
                     for r in requests)


def test_waves_run_together_and_replies_come_in_order() -> None:
    task, llm = Chain(), Counting()
    assert isinstance(task, FollowUps) and isinstance(task, Task)
    jobs = [("s", Sample(id="a", payload=3)), ("s", Sample(id="b", payload=1)),
            ("s", Sample(id="c", payload=0)), ("t", Sample(id="d", payload=2))]
    calls = run_jobs(task, llm, "m", jobs)
    assert llm.batches == [3, 2, 1]  # every pending execution's next call in one batch
    assert [[r.text for r in c.responses] for c in calls] == [["1", "2", "3"], ["1"], [],
                                                              ["1", "2"]]
    assert [r.user_text() for r in calls[3].requests] == ["t:0", "t:1"]


def test_a_task_of_one_wave_makes_one_call() -> None:
    task, llm = OneWave(), Counting()
    assert not isinstance(task, FollowUps)
    calls = run_jobs(task, llm, "m", [("s", Sample(id="a", payload=3)),
                                      ("s", Sample(id="b", payload=2))])
    assert llm.batches == [2] and [len(c.responses) for c in calls] == [1, 1]


def test_edits_apply_to_every_wave() -> None:
    seen: list[int] = []

    def edit(request: Request) -> Request:
        seen.append(request.max_tokens)
        return Request(role=request.role, model=request.model, system="edited",
                       messages=request.messages, max_tokens=16)

    calls = run_jobs(Chain(), Counting(), "m", [("s", Sample(id="a", payload=3))], edit)
    assert seen == [8, 8, 8]
    assert {(r.system, r.max_tokens) for r in calls[0].requests} == {("edited", 16)}


def test_a_program_that_never_stops_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executions, "MAX_WAVES", 5)
    with pytest.raises(TaskDataError, match="sample loop: one execution asked for more than 5"):
        run_jobs(Chain(), Counting(), "m", [("s", Sample(id="loop", payload=10**6))])
