"""A DSPy program and its metric as a StraTune task.

The skill is one document whose parts are the program's predictors' instructions, one part per
predictor, named as `named_predictors()` names them. One execution runs the whole program on
one example (its calls as `FollowUps`: see `engine.py`); the metric scores its prediction. The
samples are the examples, in the order given: `train-0000`, ..., and `test-0000`, ... for the
validation set.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import dspy
import xxhash

from llm_cache.backends.base import Backend
from llm_cache.records import Request, Response
from replay.dspy_program.engine import ReplyEngine, language_model
from replay.dspy_program.tools import program_tools, route_tools, tool_backend, tool_request
from stratune_core.records.base import Sample, Score, TaskInfo
from stratune_core.records.errors import TaskDataError
from stratune_core.records.ids import text_id
from stratune_core.records.parts import SkillParts, render_parts
from stratune_core.tasks.common import Splits, head

Metric = Callable[..., Any]
SHOWN_CHARS = 400  # inputs, outputs and gold answers shown to the optimizer


def instructions(program: dspy.Module) -> dict[str, str]:
    """Predictor name -> its instructions, in the program's order."""
    found = {name: predictor.signature.instructions
             for name, predictor in program.named_predictors()}
    if not found:
        raise TaskDataError(f"DSPy program {type(program).__name__}: it has no predictors "
                            "(dspy.Predict, dspy.ChainOfThought, ...) whose instructions to learn")
    return found


def with_instructions(program: dspy.Module, parts: dict[str, str]) -> dspy.Module:
    """A copy of `program` whose predictors' instructions are `parts` (same signatures
    otherwise, same demos)."""
    copy = program.deepcopy()
    for name, predictor in copy.named_predictors():
        predictor.signature = predictor.signature.with_instructions(parts[name])
    return copy


def _fields(values: dict[str, Any]) -> str:
    return head("\n".join(f"{k}: {v}" for k, v in values.items()), SHOWN_CHARS)


def _checked(value: object, where: str) -> tuple[float, str]:
    """A metric's value and feedback: a number or a bool, or a prediction with `score` (and
    `feedback`: the scorer's account shown to the optimizer)."""
    feedback = ""
    if not isinstance(value, int | float) and hasattr(value, "score"):
        feedback = str(getattr(value, "feedback", "") or "")
        value = value.score
    if isinstance(value, bool) or isinstance(value, int | float) and 0.0 <= value <= 1.0:
        return float(value), feedback
    raise TaskDataError(f"metric: returned {value!r:.60} for {where}; return a number in "
                        "[0, 1], a bool, or dspy.Prediction(score=..., feedback=...)")


def _one_line(error: BaseException | None) -> str:
    text = " ".join(str(error).split())
    return head(f"{type(error).__name__}: {text}", 200)


class ProgramTask:
    """`Task` and `FollowUps` for a DSPy program, its metric and its examples."""

    def __init__(self, program: dspy.Module, metric: Metric, *, name: str,
                 trainset: Sequence[dspy.Example], valset: Sequence[dspy.Example] = (),
                 threshold: float = 1.0, max_tokens: int = 1024) -> None:
        self._program = program
        self._metric = metric
        self._max_tokens = max_tokens
        self._examples: dict[str, dspy.Example] = {}
        samples: dict[str, list[Sample]] = {"train": [], "test": []}
        for split, rows in (("train", trainset), ("test", valset)):
            for index, example in enumerate(rows):
                if not isinstance(example, dspy.Example) or not example._input_keys:
                    raise TaskDataError(f"{'trainset' if split == 'train' else 'valset'}"
                                        f"[{index}]: give a dspy.Example with its inputs "
                                        "marked (example.with_inputs('question'))")
                sample = Sample(id=f"{split}-{index:04d}", payload=index)
                self._examples[sample.id] = example
                samples[split].append(sample)
        self._splits = Splits(name=name, train=tuple(samples["train"]),
                              test=tuple(samples["test"]))
        self._info = TaskInfo(name=name, initial_skill=render_parts(instructions(program)),
                              success_threshold=threshold, binary=threshold == 1.0,
                              max_tokens=max_tokens)
        self._programs: dict[str, dspy.Module] = {}
        self._engine: ReplyEngine | None = None  # the execution running (one at a time)
        self._episode = ""

    @property
    def info(self) -> TaskInfo:
        return self._info

    def split(self, name: str) -> tuple[Sample, ...]:
        return self._splits.get(name)

    def fingerprint(self) -> str:
        """What the run's task spec carries, so other examples or another program are another
        run rather than a resumption of this one."""
        rows = [(sid, sorted(e.inputs().toDict()), repr(e.toDict()))
                for sid, e in self._examples.items()]
        return xxhash.xxh64_hexdigest(repr((rows, self._info.initial_skill)).encode())[:12]

    def program_for(self, skill: str) -> dspy.Module:
        """The program with `skill`'s parts as its predictors' instructions (kept for the few
        skills a round runs)."""
        if skill not in self._programs:
            if len(self._programs) >= 8:
                self._programs.pop(next(iter(self._programs)))
            parts = SkillParts.read(skill).as_dict() if skill else instructions(self._program)
            program = with_instructions(self._program, parts)
            for _, predictor in program.named_predictors():
                predictor.lm = None  # a predictor's own LM would call outside the run's cache
            route_tools(program, self._tool_call)
            self._programs[skill] = program
        return self._programs[skill]

    def _tool_call(self, tool: dspy.Tool, arguments: dict[str, Any]) -> str:
        assert self._engine is not None, "a tool is called only while the program runs"
        return self._engine.tool(tool_request(tool, arguments, self._episode))

    def tool_backend(self) -> Backend | None:
        """The backend that runs the program's tools (None: it has none)."""
        return tool_backend(self._program) if program_tools(self._program) else None

    def _run(self, skill: str, sample: Sample, model: str,
             replies: tuple[Response, ...]) -> tuple[ReplyEngine, Any, BaseException | None]:
        engine = ReplyEngine(replies, model=model, max_tokens=self._max_tokens)
        self._engine, self._episode = engine, f"episode {text_id(skill)} {sample.id}"
        example = self._examples[sample.id]
        try:
            with dspy.context(lm=language_model(engine)):
                prediction = self.program_for(skill)(**example.inputs())
        except Exception as exc:  # a reply the adapter cannot parse fails the sample, as a score
            if engine.refused is not None:
                raise engine.refused from None
            return engine, None, exc
        return engine, prediction, None

    def requests(self, skill: str, sample: Sample, model: str) -> tuple[Request, ...]:
        return self.follow_ups(skill, sample, model, ())

    def follow_ups(self, skill: str, sample: Sample, model: str,
                   responses: tuple[Response, ...]) -> tuple[Request, ...]:
        engine, _, _ = self._run(skill, sample, model, responses)
        return () if engine.needed is None else (engine.needed,)

    def score(self, sample: Sample, responses: tuple[Response, ...]) -> Score:
        """The metric on the program's prediction from these replies. Instructions change what
        is asked, never how a reply is read (the adapter parses by the signature's fields, and
        the program's own code by the parsed values), so the program as given reads them."""
        engine, prediction, error = self._run("", sample, "scoring", responses)
        last = responses[-1].text if responses else ""
        if engine.needed is not None or error is not None:
            why = ("the program asked for more calls than the execution made"
                   if engine.needed is not None else _one_line(error))
            return Score(value=0.0, output=head(last, SHOWN_CHARS),
                         summary=f"the program failed on the model's reply: {why}")
        example = self._examples[sample.id]
        try:
            value, feedback = _checked(self._metric(example, prediction), sample.id)
        except TaskDataError:
            raise
        except Exception as exc:  # the user's metric: name the sample rather than crash
            raise TaskDataError(f"metric: raised {type(exc).__name__} ({exc}) for sample "
                                f"{sample.id}; fix the metric, then run the same call to "
                                "resume") from None
        solved = value >= self._info.success_threshold
        summary = feedback or ("" if solved else f"metric {value:g}; expected "
                                                 f"{_fields(example.labels().toDict())}")
        return Score(value=value, output=_fields(dict(prediction.items())), summary=summary)

    def describe(self, sample: Sample) -> str:
        return _fields(self._examples[sample.id].inputs().toDict())

    def expected(self, sample: Sample) -> str:
        return _fields(self._examples[sample.id].labels().toDict())
