"""DocVQA: a question about a page image, answer in `<answer>` tags, ANLS (notes §8.2).

Score = ANLS (threshold 0.5, max over gold answers), solved at >= 0.9; aux = exact match
after normalisation. The page travels as an `ImageBlock` after the question text; the shell
has already decoded, size-guarded and base64-encoded it.
"""

from __future__ import annotations

from attrs import field, frozen

from llm_cache.records import ImageBlock, Request, Response
from stratune_core.records import Sample, Score, TaskInfo
from stratune_core.tasks import anls
from stratune_core.tasks.common import Placement, Splits, head, tail, target_request

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
class DocVQATask:
    splits: Splits
    initial_skill: str
    placement: Placement = field(default=Placement.SYSTEM, converter=Placement.parse)
    max_tokens: int = MAX_TOKENS

    @property
    def info(self) -> TaskInfo:
        return TaskInfo(
            name="docvqa",
            initial_skill=self.initial_skill,
            success_threshold=SOLVED_AT,
            binary=False,
            eps0=0.001,
            max_tokens=self.max_tokens,
        )

    def split(self, name: str) -> tuple[Sample, ...]:
        return self.splits.get(name)

    def requests(self, skill: str, sample: Sample, model: str) -> tuple[Request, ...]:
        item: DocVQAItem = sample.payload
        image = ImageBlock(media_type=item.media_type, data=item.image_b64)
        return (
            target_request(
                skill=skill,
                user_text=user_prompt(item.question),
                model=model,
                max_tokens=self.max_tokens,
                placement=self.placement,
                extra_blocks=(image,),
            ),
        )

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
