"""What every backend provides. The client owns caching, retries and concurrency."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from llm_cache.errors import LLMFatalError
from llm_cache.modes import Mode
from llm_cache.records import Request, Response, TextBlock
from llm_cache.retry import RetryDecision


@runtime_checkable
class Backend(Protocol):
    name: str
    # Upper bound on this backend's concurrent calls (None: the client's limit applies).
    concurrency: int | None

    async def acomplete(self, request: Request) -> Response:
        """One attempt, no retries; raise the provider's own exception on failure."""
        ...

    def classify(self, exc: BaseException) -> RetryDecision:
        """Whether a failure of `acomplete` is worth another attempt."""
        ...

    async def aclose(self) -> None:
        """Release clients bound to the event loop that ran the calls."""
        ...


class BackendBase:
    """What every backend class inherits: the optional capabilities, each declared with the
    value that means "not offered", so the client and the shell read an attribute instead of
    probing for it. A backend overrides what it has:

    - `max_retries`: this backend's retries (a spec's `?max_retries=`); None: the client's;
    - `batch`: its Message Batches options (`batch_records.BatchOptions`); None: every call live;
    - `accepts_temperature`: whether a request's temperature reaches the model; None: the shell
      decides from the backend's kind (`run/method_options.takes_temperature`);
    - `context_tokens()`: the window a prompt and its reply share; None: not known (a remote
      API, a scripted function);
    - `rechecks(request)`: whether strict replay recomputes a cached reply and compares (a
      pure tool's call).
    """

    name: str = "backend"
    concurrency: int | None = None
    max_retries: int | None = None
    batch: object | None = None
    accepts_temperature: bool | None = None

    def context_tokens(self) -> int | None:
        return None

    def rechecks(self, request: Request) -> bool:
        """Whether a replay recomputes this request and compares it with the recorded reply
        (a pure tool's call, a harness episode); models are never asked again."""
        return False

    async def recheck(self, request: Request, recorded: Response) -> Response | None:
        """The reply recomputed for the comparison (None: not recomputed after all)."""
        return await self.acomplete(request)

    def bind_cache(self, directory: Path | None, mode: Mode) -> None:
        """Told the client's cache: a backend whose calls make further model calls (a harness
        episode) makes them through the same cache. Most ignore it."""
        return None


class BlankTextError(LLMFatalError):
    """A request holds an empty or whitespace-only text block; it was not sent."""


def refuse_blank_text(request: Request, backend: str) -> None:
    """Raise before sending a message with no content or a blank text block.

    The Messages API answers both with a 400 ("text content blocks must contain non-whitespace
    text"), which would stop a paid run mid-round; refusing here names the message instead.
    A blank system prompt is not refused: every backend treats it as no system prompt.
    """
    for number, message in enumerate(request.messages, 1):
        blank = not message.content or any(
            isinstance(block, TextBlock) and not block.text.strip() for block in message.content
        )
        if blank:
            raise BlankTextError(
                f"{backend} call to {request.model} ({request.kind.value}): message {number} "
                f"({message.role}) is empty or whitespace only; the Messages API refuses that "
                "with a 400, so nothing was sent or cached"
            )


def system_text(request: Request) -> str | None:
    """The system prompt to send, or None when it is empty or whitespace only."""
    return request.system if request.system.strip() else None
