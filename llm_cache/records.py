"""Request and response records: the only shapes that cross the door to a model.

Pure data. The core builds `Request`s; the shell's client answers them with `Response`s.
Nothing here performs I/O.
"""

from __future__ import annotations

import enum

import attrs
from attrs import field, frozen


class Role(enum.Enum):
    """Which model a request is for; the client routes each role to its own backend."""

    TARGET = "target"
    OPTIMIZER = "optimizer"
    # A tool the target called in an agent episode: answered by the tool's backend, cached
    # like a model's reply so that a replay runs no tool (`replay/tools/`).
    TOOL = "tool"


class CallKind(enum.Enum):
    """What a call is for; used for usage and cost accounting (the paper's Table 8)."""

    TARGET_EXECUTION = "target_execution"
    STRATEGY_SELECTION = "strategy_selection"
    CANDIDATE_GENERATION = "candidate_generation"
    FEEDBACK_PREPARATION = "feedback_preparation"
    # Scoring skills on the test split after a run (`train --test-eval`): outside the budget.
    TEST_EVALUATION = "test_evaluation"
    # The baselines' calls: optimizer reflections (textual gradients, trajectory analyses),
    # optimizer calls that write a skill (updates, consolidations), and summaries of a run,
    # which the target makes and the budget does not count.
    REFLECTION = "reflection"
    SKILL_UPDATE = "skill_update"
    SUMMARY = "summary"
    # A tool call of an agent episode (no tokens; its time is counted)
    TOOL_CALL = "tool_call"


@frozen(kw_only=True)
class TextBlock:
    text: str = field(validator=attrs.validators.instance_of(str))


@frozen(kw_only=True)
class ImageBlock:
    """An image sent to the target (DocVQA page). `data` is base64 of the encoded bytes."""

    media_type: str = field(validator=attrs.validators.in_(("image/png", "image/jpeg")))
    data: str = field(repr=lambda d: f"<{len(d)} base64 chars>")


@frozen(kw_only=True)
class ToolUseBlock:
    """A tool call the model made: `input` is its arguments as canonical JSON (sorted keys), so
    the same call is the same bytes in every later request of the episode."""

    id: str
    name: str
    input: str


@frozen(kw_only=True)
class ToolResultBlock:
    """What a tool answered (or why it could not), sent back in the next user turn."""

    tool_use_id: str
    content: str
    is_error: bool = False


Block = TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock


@frozen(kw_only=True)
class ToolSpec:
    """A tool offered to the target: its name, description and input JSON schema (canonical
    JSON, sorted keys), as the task declares it."""

    name: str = field(validator=attrs.validators.min_len(1))
    description: str
    schema: str


def _to_blocks(value: str | tuple[Block, ...] | list[Block]) -> tuple[Block, ...]:
    if isinstance(value, str):
        return (TextBlock(text=value),)
    return tuple(value)


@frozen(kw_only=True)
class Message:
    role: str = field(validator=attrs.validators.in_(("user", "assistant")))
    content: tuple[Block, ...] = field(converter=_to_blocks)

    @classmethod
    def user(cls, content: str | tuple[Block, ...]) -> Message:
        return cls(role="user", content=content)

    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))


@frozen(kw_only=True)
class Request:
    """One model call. Every field except `kind` can change the output and is part of the key.

    `draw` distinguishes deliberate repeated draws of the same prompt (I3 parallel sampling):
    sampling parameters cannot be relied on (SDK >= 1 dropped `temperature`).
    `kind` only labels the call for accounting and is left out of the cache key.
    """

    role: Role
    model: str = field(validator=attrs.validators.min_len(1))
    system: str
    messages: tuple[Message, ...] = field(converter=tuple)
    max_tokens: int = field(validator=attrs.validators.gt(0))
    temperature: float | None = None
    stop: tuple[str, ...] = field(default=(), converter=tuple)
    draw: int = field(default=0, validator=attrs.validators.ge(0))
    kind: CallKind = CallKind.TARGET_EXECUTION
    tools: tuple[ToolSpec, ...] = field(default=(), converter=tuple)  # offered to the model

    def user_text(self) -> str:
        return "\n".join(m.text() for m in self.messages if m.role == "user")


@frozen(kw_only=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
        )

    @property
    def total(self) -> int:
        return (
            self.input_tokens + self.output_tokens + self.cache_write_tokens + self.cache_read_tokens
        )


@frozen(kw_only=True)
class Response:
    """A model's answer. `from_cache` is transport metadata: it never enters events or equality.

    `clamped_max_tokens` is the output limit the backend really sent when the request's
    `max_tokens` did not fit the model's context beside the prompt (None: sent as asked). The
    request, and so the cache key, keeps the value the core asked for.
    """

    text: str
    stop_reason: str = "end_turn"
    usage: Usage = Usage()
    model: str = ""
    clamped_max_tokens: int | None = None
    from_cache: bool = field(default=False, eq=False)
    tool_calls: tuple[ToolUseBlock, ...] = field(default=(), converter=tuple)
