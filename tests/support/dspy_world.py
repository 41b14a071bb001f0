"""A two-predictor DSPy program over the toy world's words, for `stratune.dspy` tests.

The program drafts the word, then answers; the target (served by the project's fake Anthropic
server) answers in DSPy's field format and applies the toy rules that the `answer`
predictor's instructions hold, so the toy optimizer's rules change what the program returns.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import dspy

from llm_cache.records import Response, Role
from tests.support.toy import RULES, TRANSFORMS, ToyOptimizer, body_request, make_samples

TARGET = "claude-haiku-4-5"
OPTIMIZER = "claude-sonnet-4-6"


class Spell(dspy.Module):
    def __init__(self) -> None:
        super().__init__()
        self.draft = dspy.Predict("Word -> draft")
        self.answer = dspy.Predict("Word, draft -> answer")

    def forward(self, Word: str) -> dspy.Prediction:  # noqa: N803 (the toy feedback's field)
        draft = self.draft(Word=Word).draft
        return self.answer(Word=Word, draft=draft)


def examples(n: int, offset: int = 0) -> list[dspy.Example]:
    """Words of the markers a rule teaches ([U], [R], [D], [S]) and plain ones."""
    out = []
    for sample in make_samples(n, offset, markers=("U", "R", "D", "S", "P")):
        word, marker = sample.payload["word"], sample.payload["marker"]
        gold = TRANSFORMS[marker](word) if marker in TRANSFORMS else word
        out.append(dspy.Example(Word=f"{word} [{marker}]", answer=gold).with_inputs("Word"))
    return out


def metric(example: dspy.Example, prediction: dspy.Prediction, trace: Any = None) -> Any:
    right = str(prediction.answer).strip() == example.answer
    marker = example.Word.split("[")[-1].rstrip("]")
    return dspy.Prediction(score=float(right), feedback="" if right else
                           f"the word has marker [{marker}]; expected {example.answer}")


def _target(system: str, user: str) -> str:
    word, marker = re.search(r"\[\[ ## Word ## \]\]\n(\S+) \[(\w)\]", user).groups()
    if "produce the fields `draft`" in system:
        return f"[[ ## draft ## ]]\n{word}\n\n[[ ## completed ## ]]"
    answer = word
    for mk, transform in TRANSFORMS.items():
        if RULES[mk] in system and marker == mk:
            answer = transform(answer)
    return f"[[ ## answer ## ]]\n{answer}\n\n[[ ## completed ## ]]"


def run_offline(task: Any, sample: Any, skill: str = "") -> tuple[Response, ...]:
    """One execution of `task` (a `ProgramTask`) on `sample`, answered by the toy target
    directly: its replies, in order."""
    replies: tuple[Response, ...] = ()
    wave = task.requests(skill, sample, TARGET)
    while wave:
        replies += tuple(Response(text=_target(r.system, r.messages[-1].text())) for r in wave)
        wave = task.follow_ups(skill, sample, TARGET, replies)
    return replies


def responder(optimizer: ToyOptimizer | None = None):
    opt = optimizer or ToyOptimizer(style="good")

    def respond(body: Mapping[str, Any]) -> str:
        if body["model"] == TARGET:
            request = body_request(body, Role.TARGET)
            return _target(request.system, request.messages[-1].text())
        return opt(body_request(body, Role.OPTIMIZER)).text

    return respond


def compile_into(out: str) -> dspy.Module:
    """The run the tests make: Spell on 20 words, 10 more as the validation set."""
    from stratune.dspy import StraTune

    optimizer = StraTune(metric, target=f"anthropic:{TARGET}", optimizer=f"anthropic:{OPTIMIZER}",
                         out=out, budget="6x", progress=False)
    return optimizer.compile(Spell(), trainset=examples(20), valset=examples(10, 20))


if __name__ == "__main__":  # `python -m tests.support.dspy_world OUT`: the run in a subprocess
    import sys

    compile_into(sys.argv[1])


def times_responder():
    """For docs/python-api.md's example: the target plans, then multiplies; the optimizer is
    the toy one."""
    opt = responder()

    def respond(body: Mapping[str, Any]) -> str:
        if body["model"] != TARGET:
            return opt(body)
        content = body["messages"][-1]["content"]
        user = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
        a, b = (int(x) for x in re.search(r"What is (\d+) times (\d+)\?", user).groups())
        if "[[ ## plan ## ]]\\n" in user:
            return f"[[ ## answer ## ]]\\n{a * b}\\n\\n[[ ## completed ## ]]"
        return "[[ ## plan ## ]]\\nmultiply the numbers\\n\\n[[ ## completed ## ]]"

    return respond
