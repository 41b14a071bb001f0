"""A backend wrapping a plain callable, so scripted and fake models go through the real cache."""

from __future__ import annotations

from collections.abc import Callable

from llm_cache.backends.base import BackendBase, refuse_blank_text
from llm_cache.errors import LLMFatalError, TransientLLMError
from llm_cache.records import Request, Response
from llm_cache.retry import RetryDecision


class FunctionBackend(BackendBase):
    """`fn(request) -> Response`, called in the event loop thread one request at a time.

    Raise `TransientLLMError` from `fn` to exercise retries; any other exception is fatal.
    """

    def __init__(
        self, fn: Callable[[Request], Response], name: str = "scripted",
        concurrency: int | None = 1,
    ) -> None:
        self.fn = fn
        self.name = name
        # 1 by default: scripted functions are rarely written to be called from many threads;
        # they run in the loop thread anyway, so a higher limit gains nothing.
        self.concurrency = concurrency

    async def acomplete(self, request: Request) -> Response:
        # Scripted models get the same check as real ones, so the toy world catches a blank
        # message before a paid run would.
        refuse_blank_text(request, self.name)
        response = self.fn(request)
        if not isinstance(response, Response):
            raise LLMFatalError(
                f"backend {self.name!r}: function returned {type(response).__name__}, "
                "expected llm_cache.records.Response"
            )
        return response

    def classify(self, exc: BaseException) -> RetryDecision:
        if isinstance(exc, TransientLLMError):
            return RetryDecision.transient(str(exc), exc.retry_after)
        return RetryDecision.no(f"{type(exc).__name__}: {exc}")

    async def aclose(self) -> None:
        return None
