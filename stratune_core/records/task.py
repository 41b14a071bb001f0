"""The `Task` protocol a benchmark or a user's own task implements.

Contract:
- `split(name)` returns the samples of "train" or "test" in a fixed order; ids are unique.
- `requests(skill, sample, model)` builds the model calls of one execution (a Mind2Web task
  needs one call per step, a step with no scoreable candidate none). Pure: same inputs, same
  requests, no clock, no randomness.
- `score(sample, responses)` turns the responses (in request order) into a `Score`. It never
  raises for a bad model answer: an unparseable or wrong answer is a low score with a summary.
- `describe(sample)` / `expected(sample)` render the input and the gold answer for feedback
  and grounded worked examples (F2); they must be short (a few hundred characters).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from llm_cache.records import Request, Response
from stratune_core.records.base import Sample, Score, TaskInfo


@runtime_checkable
class Task(Protocol):
    @property
    def info(self) -> TaskInfo: ...

    def split(self, name: str) -> tuple[Sample, ...]: ...

    def requests(self, skill: str, sample: Sample, model: str) -> tuple[Request, ...]: ...

    def score(self, sample: Sample, responses: tuple[Response, ...]) -> Score: ...

    def describe(self, sample: Sample) -> str: ...

    def expected(self, sample: Sample) -> str: ...


# Optional capabilities: a task offers them by having the method. The released profile's
# feedback blocks use them where a task has them (`round/extras.py`) and skip them elsewhere.


@runtime_checkable
class StepTrajectories(Protocol):
    """Samples solved in several steps (Mind2Web): `trajectory` renders a run of the skill on
    `sample`, from its execution's `output`, as the gold steps marked + (the target got the
    step right) or - ; None when the output says nothing about the steps."""

    def trajectory(self, sample: Sample, output: str) -> str | None: ...


@runtime_checkable
class AnswerOptions(Protocol):
    """Samples that offer answer options (LiveMath's choices): `answer_options` lists each
    option's text and whether it is the correct one."""

    def answer_options(self, sample: Sample) -> tuple[tuple[str, bool], ...]: ...


FollowUpsFn = Callable[[str, Sample, str, tuple[Response, ...]], tuple[Request, ...]]


@runtime_checkable
class FollowUps(Protocol):
    """Executions whose later model calls depend on earlier replies (a program of several LM
    calls, as a DSPy program's predictors): `requests` gives the first calls, and
    `follow_ups(skill, sample, model, responses)` the calls that follow the replies so far (in
    the order sent), () once the execution is complete. Pure, as `requests` is: the same
    replies give the same calls, so the cache replays an execution call by call. `score` gets
    every reply of the execution."""

    def follow_ups(self, skill: str, sample: Sample, model: str,
                   responses: tuple[Response, ...]) -> tuple[Request, ...]: ...


def follow_ups_of(task: Task) -> FollowUpsFn | None:
    """The task's `follow_ups`, or None: the capability found by its method, as
    `isinstance(task, FollowUps)` finds it, without the runtime protocol check's cost (it runs
    on every group of executions)."""
    found = getattr(task, "follow_ups", None)
    return found if callable(found) else None
