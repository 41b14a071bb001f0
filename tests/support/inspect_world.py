"""The fake server's answers for the `inspect:` bridge tests (tasks: tests/support/inspect_tasks.py).

The target applies the toy rules its system prompt holds to the word of the user turn, picks
the right letter of a multiple-choice question, and grades a model-graded scorer's prompt (the
target is the grader when the scorer names no model): C when the submission holds the expert
answer. The optimizer is the toy one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from llm_cache.records import Role
from tests.support.toy import ToyOptimizer, body_request, toy_target

TASKS = Path(__file__).with_name("inspect_tasks.py")
TARGET = "claude-haiku-4-5"
OPTIMIZER = "claude-sonnet-4-6"
CAPITALS = {"France": "Paris", "Peru": "Lima", "Norway": "Oslo"}


def spec(name: str) -> str:
    return f"inspect:{TASKS}@{name}"


def grade(prompt: str) -> str:
    expert = re.search(r"\[Expert\]: (.*?)\n", prompt).group(1).strip()
    submission = re.search(r"\[Submission\]: (.*?)\n\*", prompt, re.S).group(1)
    return "The submission matches.\nGRADE: C" if expert in submission else \
        "It does not.\nGRADE: I"


def choose(prompt: str) -> str:
    country = re.search(r"capital of (\w+)\?", prompt).group(1)
    letter = re.search(rf"([A-E])\) {CAPITALS[country]}", prompt).group(1)
    return f"ANSWER: {letter}"


def responder(optimizer: ToyOptimizer | None = None):
    opt = optimizer or ToyOptimizer(style="good")

    def respond(body: Mapping[str, Any]) -> str:
        if body["model"] != TARGET:
            return opt(body_request(body, Role.OPTIMIZER)).text
        request = body_request(body, Role.TARGET)
        text = request.messages[-1].text()
        if "[BEGIN DATA]" in text:
            return grade(text)
        if "multiple choice question" in text:
            return choose(text)
        return toy_target(request).text

    return respond
