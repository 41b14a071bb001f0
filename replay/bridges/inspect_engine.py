"""The Inspect model that answers from replies already known, and stops at the first call it has
no reply for.

An execution runs the task's solvers on one sample, then its scorers. Every model call they
make (the target's `generate`, a model-graded scorer's grading call, whose model is the one
being evaluated unless the scorer names another) reaches `ReplyAPI`, the active model of the
run: it answers the calls it has replies for, in order, and at the first one it has none for
records that call as the core's next request and raises `NeedsReply`. The core asks it through
the run's cache (`FollowUps`), and the execution runs again from the start with one reply more,
so the cache replays an execution call by call, grading calls included.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from inspect_ai._eval.context import init_model_context
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageTool,
    GenerateConfig,
    Model,
    ModelAPI,
    ModelOutput,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from llm_cache.records import CallKind, Message, Request, Response, Role
from stratune_core.records.errors import TaskDataError

T = TypeVar("T")
DEFAULT_MAX_TOKENS = 1024  # a call whose config sets none (Inspect's providers choose their own)


class NeedsReply(Exception):  # noqa: N818 (a signal, not an error)
    """Raised inside a solver or a scorer at the model call with no reply yet."""


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to its end from synchronous code: here when no event loop runs in this
    thread, else (a notebook) in a thread of its own. Either way in a copy of the caller's
    context, so the model Inspect makes active there never leaks out."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return contextvars.copy_context().run(asyncio.run, make())
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(contextvars.copy_context().run, asyncio.run, make()).result()


def _text(message: ChatMessage) -> str:
    if isinstance(message, ChatMessageTool):
        raise TaskDataError("Inspect task: a tool result cannot be sent through StraTune; use "
                            "solvers without tools")
    content = message.content
    if not isinstance(content, str) and any(part.type not in ("text", "reasoning")
                                            for part in content):
        raise TaskDataError("Inspect task: only text can be sent through StraTune; a message "
                            "holds an image, audio or other media")
    return message.text


def to_request(messages: Sequence[ChatMessage], config: GenerateConfig, *, model: str,
               max_tokens: int) -> Request:
    """The core's request for one of the execution's model calls: the system messages' text,
    the turns, and the output limit. Sampling settings are not sent (a Claude API takes
    none); every call is one draw, keyed by its content."""
    system = "\n\n".join(_text(m) for m in messages if isinstance(m, ChatMessageSystem))
    turns = tuple(Message(role=m.role, content=_text(m)) for m in messages
                  if not isinstance(m, ChatMessageSystem))
    return Request(role=Role.TARGET, model=model, system=system, messages=turns,
                   max_tokens=config.max_tokens or max_tokens, kind=CallKind.TARGET_EXECUTION)


class ReplyEngine:
    """The replies of one execution so far, and the call that needs the next one."""

    def __init__(self, replies: Sequence[Response], *, model: str, max_tokens: int) -> None:
        self.replies = tuple(replies)
        self.model = model
        self.max_tokens = max_tokens
        self.sent: list[Request] = []
        self.needed: Request | None = None
        self.refused: TaskDataError | None = None  # a call StraTune cannot send (tools, media)

    def answer(self, messages: Sequence[ChatMessage], tools: Sequence[ToolInfo],
               config: GenerateConfig) -> ModelOutput:
        if self.needed is not None:  # a solver's retry after the stop: stay stopped
            raise NeedsReply()
        try:
            if tools:
                raise TaskDataError("Inspect task: a solver offers the model tools, which "
                                    "StraTune cannot run; use solvers without tools")
            request = to_request(messages, config, model=self.model, max_tokens=self.max_tokens)
        except TaskDataError as exc:  # kept apart: a solver may catch what a model raises
            self.refused = exc
            raise
        if len(self.sent) == len(self.replies):
            self.needed = request
            raise NeedsReply()
        self.sent.append(request)
        reply = self.replies[len(self.sent) - 1]
        return ModelOutput.from_content(
            model=self.model, content=reply.text,
            stop_reason="max_tokens" if reply.stop_reason == "max_tokens" else "stop")


@modelapi(name="stratune")
class ReplyAPI(ModelAPI):
    """The model every solver and grader of an execution calls (`get_model()`)."""

    def __init__(self, model_name: str, engine: ReplyEngine, **kwargs: Any) -> None:
        super().__init__(model_name, **kwargs)
        self.engine = engine

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo],
                       tool_choice: ToolChoice, config: GenerateConfig) -> ModelOutput:
        return self.engine.answer(input, tools, config)

    def max_connections(self) -> int:
        return 1


def active_model(engine: ReplyEngine) -> Model:
    """The execution's model, made the active one (and every model role's) for the context
    the execution runs in."""
    model = Model(ReplyAPI("target", engine=engine), GenerateConfig())
    init_model_context(model)
    return model
