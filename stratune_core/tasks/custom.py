"""A custom task: the sample's `input` is the user turn, a named scorer grades the answer.

A scorer returning something outside [0, 1] or raising is the scorer's bug, not the model's:
the error propagates so the user sees it rather than a silently wrong score.
"""

from __future__ import annotations

import numbers

import attrs
from attrs import field, frozen

from llm_cache.records import Block, ImageBlock, Response
from stratune_core.records.base import Sample, Score, TaskInfo
from stratune_core.records.errors import TaskDataError
from stratune_core.tasks import anls
from stratune_core.tasks.common import SingleTurnTask, head, tail
from stratune_core.tasks.custom_scorers import Scorer, golds
from stratune_core.tasks.user_exit import ProcessExitCalled


def _freeze(value: object) -> object:
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


@frozen(kw_only=True)
class CustomItem:
    input: str
    expected: object = field(converter=_freeze)
    image_b64: str | None = field(default=None, repr=False)
    media_type: str = "image/png"


@frozen(kw_only=True)
class CustomTask(SingleTurnTask):
    """Named by the user, graded by its scorer: `info` comes from those, not from constants."""

    name: str
    scorer: Scorer
    max_tokens: int = 1024
    eps0: float = 0.0025

    @property
    def info(self) -> TaskInfo:
        scorer = self.scorer
        return attrs.evolve(super().info, name=self.name, success_threshold=scorer.threshold,
                            binary=scorer.binary, eps0=self.eps0)

    def user_text(self, sample: Sample) -> str:
        return sample.payload.input

    def extra_blocks(self, sample: Sample) -> tuple[Block, ...]:
        item: CustomItem = sample.payload
        if item.image_b64 is None:
            return ()
        return (ImageBlock(media_type=item.media_type, data=item.image_b64),)

    def score(self, sample: Sample, responses: tuple[Response, ...]) -> Score:
        item: CustomItem = sample.payload
        text = responses[0].text if responses else ""
        try:
            raw = self.scorer.fn(text, item.expected)
        except (Exception, SystemExit) as exc:  # the user's: name the sample rather than crash
            exit_fn = "os._exit" if isinstance(exc, ProcessExitCalled) else "sys.exit"
            what = (f"called {exit_fn}({exc.code!r})" if isinstance(exc, SystemExit)
                    else f"raised {type(exc).__name__} ({exc})")
            raise TaskDataError(
                f"scorer {self.scorer.name}: {what} for sample {sample.id}; fix the scorer "
                "(it returns a number in [0, 1]), then run the same command to resume"
            ) from None
        if not isinstance(raw, numbers.Real) or not 0.0 <= float(raw) <= 1.0:
            raise TaskDataError(
                f"scorer {self.scorer.name}: returned {raw!r} for sample {sample.id}; "
                "a scorer must return a number in [0, 1]"
            )
        value = float(raw)
        if value >= self.scorer.threshold - 1e-9:
            return Score(value=value, output=tail(text), summary="")
        said = head(anls.extract_answer(text), 80)
        want = " | ".join(head(g, 60) for g in golds(item.expected)[:3])
        summary = f'answered "{said}", expected "{want}" ({self.scorer.name} {value:.2f})'
        return Score(value=value, output=tail(text),
                     summary=summary + _wrapped_hint(said, golds(item.expected)))

    def describe(self, sample: Sample) -> str:
        item: CustomItem = sample.payload
        return head(("[image] " if item.image_b64 else "") + item.input)

    def expected(self, sample: Sample) -> str:
        item: CustomItem = sample.payload
        return head(" | ".join(golds(item.expected)), 300)


def _wrapped_hint(said: str, expected: tuple[str, ...]) -> str:
    """Name the commonest near miss: the right value inside a longer reply. The score alone
    cannot tell the optimizer that the content was right and only the form was wrong."""
    reply = anls.normalize(said)
    for gold in expected:
        want = anls.normalize(gold)
        if want and want in reply and len(reply) > len(want):
            return "; the reply contains the expected answer but adds other words around it"
    return ""
