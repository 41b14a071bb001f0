"""The real Messages API behind the proxy: each harness call the cache does not hold is sent
as the CLI wrote it (a whole message asked for, not a stream) to the endpoint and key of the
`anthropic:` backend (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `?base_url=`); the reply is
the message JSON, stored whole under the normalized request's key, so the proxy can answer the
CLI exactly as the API did (its tool calls, thinking blocks and usage included)."""

from __future__ import annotations

import json
import os
import threading
from typing import Any

import httpx

from llm_cache.backends.base import BackendBase
from llm_cache.errors import LLMFatalError, TransientLLMError
from llm_cache.key import canonical_request
from llm_cache.records import Request, Response, Usage
from llm_cache.retry import RetryDecision

DEFAULT_URL = "https://api.anthropic.com"
TIMEOUT = httpx.Timeout(600.0, connect=10.0)
PASSED_HEADERS = ("anthropic-version", "anthropic-beta")


class Upstream(BackendBase):
    """Sends the original body of a normalized request (`expect` registers it first)."""

    def __init__(self, *, api_key: str | None = None, base_url: str | None = None) -> None:
        self.name = "claude-code upstream"
        self.concurrency = 8
        self.api_key = api_key or os.environ.get("ANTHROPIC_API_KEY", "")
        self.base_url = (base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_URL).rstrip("/")
        self._bodies: dict[str, tuple[dict[str, Any], dict[str, str]]] = {}
        self._lock = threading.Lock()

    def expect(self, request: Request, body: dict[str, Any], headers: dict[str, str]) -> None:
        with self._lock:
            self._bodies[canonical_request(request)] = (body, headers)

    async def acomplete(self, request: Request) -> Response:
        with self._lock:
            found = self._bodies.get(canonical_request(request))
        if found is None:
            raise LLMFatalError("a harness call reached the upstream without its body")
        body, headers = found
        sent = {**body, "stream": False}
        head = {"x-api-key": self.api_key, "content-type": "application/json",
                "anthropic-version": "2023-06-01",
                **{k: v for k, v in headers.items() if k in PASSED_HEADERS}}
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:
            reply = await client.post(f"{self.base_url}/v1/messages", json=sent, headers=head)
        if reply.status_code in (429, 500, 502, 503, 504, 529):
            raise TransientLLMError(f"HTTP {reply.status_code}: {reply.text[:200]}")
        if reply.status_code != 200:
            raise LLMFatalError(f"HTTP {reply.status_code} from {self.base_url}: "
                                f"{reply.text[:200]}")
        message = reply.json()
        usage = message.get("usage") or {}
        return Response(text=json.dumps(message, sort_keys=True), model=message.get("model", ""),
                        stop_reason=message.get("stop_reason") or "end_turn",
                        usage=Usage(input_tokens=usage.get("input_tokens") or 0,
                                    output_tokens=usage.get("output_tokens") or 0,
                                    cache_write_tokens=usage.get(
                                        "cache_creation_input_tokens") or 0,
                                    cache_read_tokens=usage.get("cache_read_input_tokens") or 0))

    def classify(self, exc: BaseException) -> RetryDecision:
        if isinstance(exc, TransientLLMError | httpx.TransportError):
            return RetryDecision.transient(str(exc))
        return RetryDecision.no(f"{type(exc).__name__}: {exc}")

    async def aclose(self) -> None:
        return None
