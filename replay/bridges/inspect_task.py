"""An Inspect task as a StraTune task (`inspect:FILE.py@TASK`; loaded by `inspect_load.py`).

One execution runs the task's setup and solvers on one sample, with the skill as its system
message(s) (`inspect_skill.py`), then scores the result with the task's own scorers, through
Inspect's scorer API (`includes`, `match`, `exact`, `choice`, model-graded ones, a user's
`@scorer`). Every model call of the execution is a request of the core (`FollowUps`, answered
through the run's cache; `inspect_engine.py`), a model-graded scorer's grading call included.
A sample's score is the mean of its scorers' values as Inspect reads them as numbers
(`C` 1, `P` 0.5, `I` 0; a dict or list value: the mean of its items).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from copy import deepcopy
from typing import Any

from attrs import field, frozen
from inspect_ai import Task as InspectDefinition
from inspect_ai._util.registry import registry_info
from inspect_ai.model import ChatMessage, ChatMessageUser, GenerateConfig, ModelName
from inspect_ai.scorer import Score as InspectScore
from inspect_ai.scorer import Scorer, Target, value_to_float
from inspect_ai.solver import Solver, TaskState

from llm_cache.records import Request, Response
from replay.bridges.inspect_engine import NeedsReply, ReplyEngine, active_model, run_sync
from replay.bridges.inspect_skill import SkillLayout, listed, solvers_of
from stratune_core.records.base import Sample, Score, TaskInfo
from stratune_core.records.errors import TaskDataError
from stratune_core.tasks.common import Splits, head, tail

SHOWN = 400
_TO_FLOAT = value_to_float()


@frozen(kw_only=True)
class InspectItem:
    """One Inspect sample: what a TaskState is made from."""

    input: str | tuple[ChatMessage, ...] = field(eq=False)
    target: str | tuple[str, ...] = field(converter=lambda t: t if isinstance(t, str) else tuple(t))
    choices: tuple[str, ...] | None = None
    metadata: dict[str, Any] = field(factory=dict, eq=False)
    id: str

    def state(self) -> TaskState:
        messages: list[ChatMessage] = [ChatMessageUser(content=self.input)] \
            if isinstance(self.input, str) else deepcopy(list(self.input))
        return TaskState(model=ModelName("stratune/target"), sample_id=self.id, epoch=1,
                         input=self.input if isinstance(self.input, str) else list(self.input),
                         messages=messages, target=Target(self.gold()),
                         choices=list(self.choices) if self.choices else None,
                         metadata=deepcopy(self.metadata))

    def gold(self) -> str | list[str]:
        return self.target if isinstance(self.target, str) else list(self.target)


def _value(name: str, score: InspectScore | None, sample_id: str) -> float:
    value = None if score is None else score.value
    items = list(value.values()) if isinstance(value, dict) else \
        list(value) if isinstance(value, list) else [value]
    floats = [0.0 if v is None else _TO_FLOAT(v) for v in items]
    floats = [0.0 if math.isnan(f) else f for f in floats]  # unscored: no credit
    if not floats or not all(0.0 <= f <= 1.0 for f in floats):
        raise TaskDataError(f"scorer {name}: value {value!r:.60} for sample {sample_id}; "
                            "StraTune reads scores in [0, 1] (C, P, I, numbers, bools)")
    return sum(floats) / len(floats)


def _said(name: str, score: InspectScore | None, output: str) -> str:
    if score is None:
        return f"{name}: no score"
    why = score.explanation if score.explanation not in (None, "", score.answer, output) else ""
    return f"{name}: {score.value!s:.40}" + (f" (reason {score.reason})" if score.reason else "") \
        + (f", answer {head(str(score.answer), 80)!r}" if score.answer else "") \
        + (f"; {head(' '.join(why.split()), 200)}" if why else "")


class InspectTask:
    """`Task` and `FollowUps` for an Inspect task's samples, solvers and scorers."""

    def __init__(self, definition: InspectDefinition, *, name: str, splits: Splits,
                 layout: SkillLayout, binary: bool, max_tokens: int) -> None:
        self.definition = definition
        self._splits = splits
        self._layout = layout
        self._setup = listed(definition.setup)
        self._solvers = solvers_of(definition)
        self._scorers: list[Scorer] = list(definition.scorer or [])
        self._config: GenerateConfig = definition.config
        self._max_tokens = max_tokens
        self._info = TaskInfo(name=name, initial_skill=layout.initial_skill(),
                              success_threshold=1.0, binary=binary, max_tokens=max_tokens,
                              placeholders=layout.placeholders())
        self._plans: dict[str, list[Solver]] = {}

    @property
    def info(self) -> TaskInfo:
        return self._info

    def split(self, name: str) -> tuple[Sample, ...]:
        return self._splits.get(name)

    def scorer_names(self) -> list[str]:
        return [_registry_name(s) for s in self._scorers]

    def _plan(self, skill: str) -> list[Solver]:
        if skill not in self._plans:
            if len(self._plans) >= 8:  # the few skills a round runs
                self._plans.pop(next(iter(self._plans)))
            self._plans[skill] = [*self._setup, *self._layout.solvers(self._solvers, skill)]
        return self._plans[skill]

    def run(self, skill: str, sample: Sample, model: str, replies: Sequence[Response],
            ) -> tuple[ReplyEngine, tuple[str, list[InspectScore | None]] | None,
                       BaseException | None]:
        """The execution as far as `replies` take it: the engine (its `needed` call, if any),
        the target's last output and each scorer's score, or the error it stopped on."""
        engine = ReplyEngine(replies, model=model, max_tokens=self._max_tokens)
        item: InspectItem = sample.payload
        plan = self._plan(skill)

        async def execute() -> tuple[str, list[InspectScore | None]]:
            llm = active_model(engine)
            state = item.state()

            async def generate(state: TaskState, *args: Any, **kwargs: Any) -> TaskState:
                state.output = await llm.generate(state.messages, tools=state.tools,
                                                  config=self._config)
                state.messages.append(state.output.message)
                return state

            for solver in plan:
                state = await solver(state, generate)
                if state.completed:
                    break
            target = Target(item.gold())
            return state.output.completion, [await s(state, target) for s in self._scorers]

        try:
            return engine, run_sync(execute), None
        except NeedsReply:
            return engine, None, None
        except Exception as exc:  # a solver or scorer that failed on this sample's replies
            if engine.refused is not None:
                raise engine.refused from None
            if isinstance(exc, TaskDataError):
                raise
            return engine, None, None if engine.needed is not None else exc

    def requests(self, skill: str, sample: Sample, model: str) -> tuple[Request, ...]:
        return self.follow_ups(skill, sample, model, ())

    def follow_ups(self, skill: str, sample: Sample, model: str,
                   responses: tuple[Response, ...]) -> tuple[Request, ...]:
        engine, _, _ = self.run(skill, sample, model, responses)
        return () if engine.needed is None else (engine.needed,)

    def score(self, sample: Sample, responses: tuple[Response, ...]) -> Score:
        """The scorers on the execution these replies make. A skill changes what the target is
        asked, not how its replies are read, so the initial skill's run reads them."""
        engine, done, error = self.run(self._info.initial_skill, sample, "scoring", responses)
        last = responses[-1].text if responses else ""
        if done is None:
            why = ("the task asked for more model calls than the execution made"
                   if error is None else f"{type(error).__name__}: {' '.join(str(error).split())}")
            return Score(value=0.0, output=tail(last), summary=head(
                f"the task's solvers or scorers failed on the model's reply: {why}", SHOWN))
        output, scores = done
        names = self.scorer_names()
        value = sum(_value(n, s, sample.id) for n, s in zip(names, scores, strict=True)) / \
            max(1, len(scores))
        summary = "" if value >= 1.0 - 1e-9 else head(
            "; ".join(_said(n, s, output) for n, s in zip(names, scores, strict=True)), SHOWN)
        return Score(value=value, output=tail(output or last), summary=summary)

    def describe(self, sample: Sample) -> str:
        item: InspectItem = sample.payload
        text = item.input if isinstance(item.input, str) else \
            "\n".join(f"{m.role}: {m.text}" for m in item.input)
        options = "".join(f"\n{chr(65 + i)}) {c}" for i, c in enumerate(item.choices or ()))
        return head(text + options)

    def expected(self, sample: Sample) -> str:
        item: InspectItem = sample.payload
        golds = [item.target] if isinstance(item.target, str) else list(item.target)
        if item.choices:
            golds = [f"{g} ({item.choices[ord(g) - 65]})" if len(g) == 1 and
                     0 <= ord(g) - 65 < len(item.choices) else g for g in golds]
        return head(" | ".join(golds), 300)


def _registry_name(item: object) -> str:
    try:
        return str(registry_info(item).name).removeprefix("inspect_ai/")
    except ValueError:
        return getattr(item, "__name__", type(item).__name__)
