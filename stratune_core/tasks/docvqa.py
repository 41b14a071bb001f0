"""DocVQA: a question about a page image, answer in `<answer>` tags, ANLS (docs/design.md,
"Tasks").

Score = ANLS (threshold 0.5, max over gold answers), solved at >= 0.9; aux = exact match
after normalisation. The page travels as an `ImageBlock` after the question text; the shell
has already decoded, size-guarded and base64-encoded it.
"""

from __future__ import annotations

from typing import ClassVar

from attrs import field, frozen

from llm_cache.records import Block, ImageBlock, Response
from stratune_core.records.base import Sample, Score
from stratune_core.tasks import anls
from stratune_core.tasks.common import SingleTurnTask, head, tail

MAX_TOKENS = 16384
SOLVED_AT = 0.9


@frozen(kw_only=True)
class DocVQAItem:
    question: str
    answers: tuple[str, ...] = field(converter=tuple)
    image_b64: str = field(repr=lambda d: f"<{len(d)} base64 chars>")
    media_type: str = "image/png"
    question_types: tuple[str, ...] = field(default=(), converter=tuple)


def user_prompt(question: str) -> str:
    return f"{question}\n\nReturn the final answer inside <answer>...</answer>."


def score_answer(text: str, answers: tuple[str, ...], threshold: float = SOLVED_AT) -> Score:
    """ANLS score of a raw model answer against the gold answers, with a failure summary."""
    predicted = anls.extract_answer(text)
    value = anls.anls(predicted, answers)
    exact = 1.0 if anls.exact_match(predicted, answers) else 0.0
    if value >= threshold - 1e-9:
        return Score(value=value, output=tail(text), summary="", aux=exact)
    gold = " | ".join(head(a, 60) for a in answers[:3])
    tagged = "<answer>" in text.lower()
    where = "" if tagged else " (no <answer> tags; used the last line)"
    summary = f'answered "{head(predicted, 80)}", expected "{gold}" (ANLS {value:.2f}){where}'
    return Score(value=value, output=tail(text), summary=summary, aux=exact)


@frozen(kw_only=True)
class DocVQATask(SingleTurnTask):
    NAME: ClassVar[str] = "docvqa"
    ANSWER_MARKUP: ClassVar[tuple[str, ...]] = ("<answer>", "</answer>")
    SOLVED_AT: ClassVar[float] = SOLVED_AT
    BINARY: ClassVar[bool] = False
    EPS0: ClassVar[float] = 0.001
    max_tokens: int = MAX_TOKENS

    def user_text(self, sample: Sample) -> str:
        item: DocVQAItem = sample.payload
        return user_prompt(item.question)

    def extra_blocks(self, sample: Sample) -> tuple[Block, ...]:
        item: DocVQAItem = sample.payload
        return (ImageBlock(media_type=item.media_type, data=item.image_b64),)

    def score(self, sample: Sample, responses: tuple[Response, ...]) -> Score:
        item: DocVQAItem = sample.payload
        return score_answer(responses[0].text if responses else "", item.answers)

    def describe(self, sample: Sample) -> str:
        item: DocVQAItem = sample.payload
        kinds = ", ".join(item.question_types)
        return head(f"[page image] Q: {item.question}" + (f" (types: {kinds})" if kinds else ""))

    def expected(self, sample: Sample) -> str:
        item: DocVQAItem = sample.payload
        return head(" | ".join(item.answers), 300)
