"""What every backend provides. The client owns caching, retries and concurrency."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from llm_cache.records import Request, Response
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
