"""The one door the core uses to reach models: a batch of requests in, responses out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from llm_cache.records import Request, Response


@runtime_checkable
class LLM(Protocol):
    def complete(self, requests: Sequence[Request]) -> tuple[Response, ...]:
        """Answer every request; responses come back in request order.

        Transport failures are retried inside; an unrecoverable one raises (the run stops and
        can be resumed from the cache). A model-level failure (refusal, truncation) is a
        normal response the task scores.
        """
        ...
