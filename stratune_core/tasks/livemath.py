"""LiveMathematicianBench: five-way multiple choice, binary accuracy (docs/design.md, "Tasks").

Label rules, with two pitfalls of the released code's parser fixed:
1. The last `ANSWER: X` or `<answer>X</answer>` in the whole answer. The keyword may be in
   any case, the letter must be an upper-case A-E standing alone ("Answer: Because" is no B).
2. Otherwise, in the last 200 characters, the last marked letter: "option C", "choice C",
   "answer is C", "(C)", "[C]", "**C**", or a bare B-E. A bare "A" counts only when no word
   follows it, so the article in "A stronger result holds" is never read as a choice.
The guardrail (`aux`) is 1 when a label was found.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from attrs import field, frozen

from llm_cache.records import Response
from stratune_core.records.base import Sample, Score
from stratune_core.tasks.common import SingleTurnTask, head, tail

LABELS = ("A", "B", "C", "D", "E")
MAX_TOKENS = 6000
_LETTER = r"\(?\**([A-E])\**\)?(?![A-Za-z0-9])"
_PRIMARY = (
    re.compile(r"(?i:answer)\s*[:：]\s*" + _LETTER),
    re.compile(r"(?i:<answer>)\s*\(?([A-E])\)?\s*(?i:</answer>)"),
)
_FALLBACK = (
    re.compile(r"(?i:option|choice|answer\s+is)\s*[:：]?\s*" + _LETTER),
    re.compile(r"[(\[]([A-E])[)\]]"),
    re.compile(r"\*\*([A-E])\*\*"),
    re.compile(r"(?<![A-Za-z0-9])([B-E])(?![A-Za-z0-9])"),
    re.compile(r"(?<![A-Za-z0-9])(A)(?![A-Za-z0-9])(?!\s*[A-Za-z])"),
)
_TAIL = 200


@frozen(kw_only=True)
class LiveMathItem:
    question: str
    choices: tuple[tuple[str, str], ...] = field(converter=tuple)  # (label, text)
    correct_label: str
    correct_text: str = ""
    month: str = ""


def _last_match(patterns: tuple[re.Pattern[str], ...], text: str) -> tuple[int, str] | None:
    best: tuple[int, str] | None = None
    for pattern in patterns:
        for m in pattern.finditer(text):
            if best is None or m.end() >= best[0]:
                best = (m.end(), m.group(1))
    return best


def parse_label(text: str) -> str | None:
    """The chosen label A-E, or None when the answer names none (rules in the module doc)."""
    found = _last_match(_PRIMARY, text)
    if found is not None:
        return found[1]
    found = _last_match(_FALLBACK, text[-_TAIL:])
    return found[1] if found is not None else None


def user_prompt(item: LiveMathItem) -> str:
    choices = "\n".join(f"{label}. {text}" for label, text in item.choices)
    return f"{item.question}\n\nChoices:\n{choices}\n\nSelect the single correct choice."


@frozen(kw_only=True)
class LiveMathTask(SingleTurnTask):
    NAME: ClassVar[str] = "livemath"
    ANSWER_MARKUP: ClassVar[tuple[str, ...]] = ("ANSWER:",)
    # paper Table 5: LiveMath screens on 24 solved + 24 random samples (18 + 18 elsewhere)
    PRESET: ClassVar[Mapping[str, Any]] = MappingProxyType(
        {"screen_solved": 24, "screen_random": 24})
    # the authors' configs/livemath.json: 6 epochs (4 elsewhere); the warm-up waits for as many
    # solved samples as the solved part of a screening set, 24 here (18 elsewhere)
    PROFILE_PRESETS: ClassVar[Mapping[str, Mapping[str, Any]]] = MappingProxyType(
        {"released": {"max_epochs": 6, "warmup_solved": 24}})
    max_tokens: int = MAX_TOKENS

    def user_text(self, sample: Sample) -> str:
        return user_prompt(sample.payload)

    def score(self, sample: Sample, responses: tuple[Response, ...]) -> Score:
        item: LiveMathItem = sample.payload
        text = responses[0].text if responses else ""
        label = parse_label(text)
        output = tail(text)
        if label is None:
            summary = "no choice label found; end with a line 'ANSWER: <letter>'"
            if responses and responses[0].stop_reason == "max_tokens":
                summary = "answer cut off at the token limit before any 'ANSWER: <letter>' line"
            return Score(value=0.0, output=output, summary=summary, aux=0.0)
        if label == item.correct_label:
            return Score(value=1.0, output=output, summary="", aux=1.0)
        summary = (
            f"chose {label}, correct is {item.correct_label} "
            f"({head(item.correct_text or _choice_text(item, item.correct_label), 120)})"
        )
        return Score(value=0.0, output=output, summary=summary, aux=1.0)

    def describe(self, sample: Sample) -> str:
        item: LiveMathItem = sample.payload
        choices = " | ".join(f"{label}. {head(text, 60)}" for label, text in item.choices)
        return head(f"{head(item.question, 250)}\nChoices: {choices}", 600)

    def expected(self, sample: Sample) -> str:
        item: LiveMathItem = sample.payload
        text = item.correct_text or _choice_text(item, item.correct_label)
        return head(f"ANSWER: {item.correct_label} ({text})", 300)

    def answer_options(self, sample: Sample) -> tuple[tuple[str, bool], ...]:
        """The choices and which is correct (`task.AnswerOptions`: the released profile's
        answer statistics, e.g. how often "a stronger result can be proven" is right)."""
        item: LiveMathItem = sample.payload
        return tuple((text, label == item.correct_label) for label, text in item.choices)


def _choice_text(item: LiveMathItem, label: str) -> str:
    return next((text for lab, text in item.choices if lab == label), "")


@frozen(kw_only=True)
class LiveMathOpusTask(LiveMathTask):
    """LiveMath as the authors ran it in the Opus setting (configs/livemath_opus.json): the same
    data and scorer; the released profile adds the answer options' training base rates to the
    feedback (`feedback_global_stats`)."""

    NAME: ClassVar[str] = "livemath_opus"
    PROFILE_PRESETS: ClassVar[Mapping[str, Mapping[str, Any]]] = MappingProxyType(
        {"released": {**LiveMathTask.PROFILE_PRESETS["released"], "feedback_global_stats": True}})
