"""The DSPy LM a program runs on inside a StraTune execution: it answers from replies already
known and stops the program at the first call it has no reply for.

The core asks the model through its cache, wave by wave (`FollowUps`); between waves the
program is run again from the start on the replies so far, so its next call is the request the
core sends next. A program is deterministic given its replies, so the same replies give the
same next request, and the cache replays an execution call by call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dspy
from dspy import lm15

from llm_cache.records import CallKind, Message, Request, Response, Role
from stratune_core.records.errors import TaskDataError


class NeedsReply(Exception):  # noqa: N818 (a signal, not an error)
    """Raised inside the program at the call with no reply yet."""


def to_request(request: lm15.Request, *, model: str, max_tokens: int) -> Request:
    """The core's request for one of the program's LM calls. Only what changes the reply goes
    in: the system text, the turns and the output limit (the program's own, else `max_tokens`);
    a DSPy LM's sampling settings are not sent."""
    system = request.system
    if system is not None and not isinstance(system, str):
        system = "".join(getattr(part, "text", "") or "" for part in system)
    messages = []
    for message in request.messages:
        if message.role not in ("user", "assistant"):
            raise TaskDataError(f"DSPy program: a {message.role!r} message (native function "
                                "calling) cannot be sent through StraTune; use dspy.ReAct or "
                                "tools the program calls itself, with the default adapter")
        if any(getattr(part, "type", "text") != "text" for part in message.parts):
            raise TaskDataError("DSPy program: only text inputs can be sent through StraTune; "
                                "an image or file part was given")
        messages.append(Message(role=message.role, content=message.text or ""))
    limit = (request.config.max_tokens if request.config else None) or max_tokens
    return Request(role=Role.TARGET, model=model, system=system or "",
                   messages=tuple(messages), max_tokens=limit,
                   kind=CallKind.TARGET_EXECUTION)


class ReplyEngine:
    """A DSPy engine (`complete(lm15.Request) -> lm15.Response`) over known replies."""

    def __init__(self, replies: Sequence[Response], *, model: str, max_tokens: int) -> None:
        self._replies = tuple(replies)
        self._model = model
        self._max_tokens = max_tokens
        self.sent: list[Request] = []
        self.needed: Request | None = None
        self.refused: TaskDataError | None = None  # a call StraTune cannot send (tools, images)
        self._used = 0  # replies consumed, by the LM's calls and the tools'

    def _next(self, request: Request) -> Response:
        """The reply to the program's next call, or the stop at the first without one."""
        if self.needed is not None:  # an adapter's fallback after the stop: stay stopped
            raise NeedsReply()
        if self._used == len(self._replies):
            self.needed = request
            raise NeedsReply()
        self.sent.append(request)
        self._used += 1
        return self._replies[self._used - 1]

    def tool(self, request: Request) -> str:
        """A tool call of the program: its recorded result (a tool error as its text)."""
        return self._next(request).text

    def complete(self, request: lm15.Request) -> lm15.Response:
        if self.needed is not None:
            raise NeedsReply()
        try:
            ours = to_request(request, model=self._model, max_tokens=self._max_tokens)
        except TaskDataError as exc:  # kept apart: DSPy wraps what an engine raises
            self.refused = exc
            raise
        reply = self._next(ours)
        return lm15.Response(
            id=None, model=self._model,
            message=lm15.Message.assistant([lm15.TextPart(reply.text)]),
            finish_reason="length" if reply.stop_reason == "max_tokens" else "stop",
            usage=lm15.Usage(input_tokens=reply.usage.input_tokens,
                             output_tokens=reply.usage.output_tokens,
                             total_tokens=reply.usage.input_tokens + reply.usage.output_tokens))

    def stream(self, request: lm15.Request) -> Any:
        return lm15.response_to_events(self.complete(request))

    def close(self) -> None:
        return None


def language_model(engine: ReplyEngine) -> dspy.LM:
    """A DSPy LM on `engine`, with DSPy's own cache and retries off: StraTune's cache holds
    every reply, and a failed call is the core's to retry."""
    return dspy.LM("stratune/target", engine=engine, cache=False, num_retries=0)
