"""A stdlib HTTP server speaking the Anthropic Messages API, for tests and benchmarks.

Reached by the real `anthropic` SDK through `base_url`. It answers `POST /v1/messages`, the
Bedrock invoke path `POST /model/{model}/invoke` and Bedrock Mantle's
`POST /anthropic/v1/messages`, and the Message Batches API under `/v1/messages/batches`
(`fake_batches`); validates requests as the real endpoints do (`fake_replies`);
can inject latency and faults on a seeded schedule, act as a proxy that wants `x-api-key`;
emulates prompt-caching usage, and logs every request it saw.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Mapping, Sequence
from http.server import ThreadingHTTPServer
from typing import Any

from llm_cache.prices import default_prices
from llm_cache.testing.fake_batches import FakeBatches, ItemOutcome
from llm_cache.testing.fake_http import HttpServer, LoggedRequest, MessagesHandler
from llm_cache.testing.fake_replies import (
    Fault,
)

__all__ = ["FakeAnthropicServer", "Fault", "ItemOutcome", "LoggedRequest", "default_responder",
           "estimate_tokens"]


def estimate_tokens(text: str) -> int:
    """Deterministic stand-in for a tokenizer (about 4 characters per token)."""
    return len(text) // 4


def default_responder(body: Mapping[str, Any]) -> str:
    """Echo the last user text, so different requests get different answers."""
    messages = body.get("messages") or [{}]
    content = messages[-1].get("content", "")
    if isinstance(content, list):
        content = "".join(b.get("text", "") for b in content if b.get("type") == "text")
    return f"echo: {content}"


Responder = Callable[[Mapping[str, Any]], "str | Mapping[str, Any]"]


class FakeAnthropicServer:
    """Context manager: `with FakeAnthropicServer() as fake: Anthropic(base_url=fake.url, ...)`.

    faults: explicit schedule, one entry per arriving request (None = answer normally); requests
    past its end are answered normally unless `fault_rate` draws a fault from `fault_kinds`
    with `random.Random(seed)`. fault_headers: extra response headers per fault kind (e.g.
    `x-should-retry`). proxy_auth_header="x-api-key": behave like a gateway that reads only
    that header and answers 401 to anything else.

    batch_delay: seconds from a batch's creation to its end. batch_outcomes: explicit outcome
    per batch item (None = drawn: an errored item with `batch_error_rate`, of the kinds in
    `batches.error_kinds`, an expired one with `batch_expire_rate`). Faults apply to the batch
    endpoints' HTTP requests as to any other.
    """

    def __init__(
        self,
        *,
        responder: Responder = default_responder,
        latency: float = 0.0,
        faults: Sequence[Fault | None] = (),
        fault_rate: float = 0.0,
        fault_kinds: Sequence[Fault] = (Fault.RATE_LIMIT, Fault.OVERLOADED, Fault.SERVER_ERROR),
        seed: int = 0,
        stall_seconds: float = 2.0,
        cache_min_tokens: int | None = None,
        fault_headers: Mapping[Fault, Mapping[str, str]] | None = None,
        proxy_auth_header: str | None = None,
        batch_delay: float = 0.0,
        batch_outcomes: Sequence[ItemOutcome | None] = (),
        batch_error_rate: float = 0.0,
        batch_expire_rate: float = 0.0,
    ) -> None:
        self.responder = responder
        self.latency = latency
        self.faults = tuple(faults)
        self.fault_rate = fault_rate
        self.fault_kinds = tuple(fault_kinds)
        self.stall_seconds = stall_seconds
        self.cache_min_tokens = cache_min_tokens
        self.fault_headers = dict(fault_headers or {})
        self.proxy_auth_header = proxy_auth_header
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._log: list[LoggedRequest] = []
        self._prefixes: set[str] = set()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.batches = FakeBatches(self.answer, lambda: self.url, delay=batch_delay,
                                   error_rate=batch_error_rate, expire_rate=batch_expire_rate,
                                   outcomes=batch_outcomes, seed=seed)

    # ---- lifecycle ----

    def start(self) -> FakeAnthropicServer:
        handler = type("Handler", (MessagesHandler,), {"fake": self})
        self._server = HttpServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeAnthropicServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "start the server first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def requests(self) -> tuple[LoggedRequest, ...]:
        with self._lock:
            return tuple(self._log)

    # ---- behaviour ----

    def _admit(self, method: str, path: str, headers: Mapping[str, str],
               body: Mapping[str, Any]) -> LoggedRequest:
        with self._lock:
            index = len(self._log)
            if index < len(self.faults):
                fault = self.faults[index]
            elif self.fault_rate and self._rng.random() < self.fault_rate:
                fault = self._rng.choice(self.fault_kinds)
            else:
                fault = None
            entry = LoggedRequest(index=index, method=method, path=path, headers=dict(headers),
                                  body=body, fault=fault)
            self._log.append(entry)
            return entry

    def _usage(self, model: str, body: Mapping[str, Any], output: str) -> dict[str, int]:
        system = body.get("system") or []
        if isinstance(system, str):
            system = [{"type": "text", "text": system}]
        minimum = self.cache_min_tokens or default_prices().cache_min_tokens(model)
        prefix_text, cached_tokens, rest = "", 0, 0
        for block in system:
            prefix_text += block.get("text", "")
            if block.get("cache_control"):
                cached_tokens = estimate_tokens(prefix_text)
        rest = estimate_tokens(prefix_text) - cached_tokens
        for message in body.get("messages", []):
            content = message.get("content", "")
            if isinstance(content, list):
                content = "".join(b.get("text", "") for b in content if b.get("type") == "text")
            rest += estimate_tokens(content)
        write = read = 0
        if cached_tokens and cached_tokens >= minimum:
            prefix_key = f"{model}\x00{prefix_text}"
            with self._lock:
                seen = prefix_key in self._prefixes
                self._prefixes.add(prefix_key)
            read, write = (cached_tokens, 0) if seen else (0, cached_tokens)
        else:
            rest += cached_tokens
        return {"input_tokens": rest, "output_tokens": max(1, estimate_tokens(output)),
                "cache_creation_input_tokens": write, "cache_read_input_tokens": read}

    def message(self, entry: LoggedRequest, model: str) -> dict[str, Any]:
        return self.answer(entry.body, model, f"msg_fake_{entry.index}")

    def answer(self, body: Mapping[str, Any], model: str, message_id: str) -> dict[str, Any]:
        answer = self.responder(body)
        if not isinstance(answer, str):
            return dict(answer)
        return {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": answer}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": self._usage(model, body, answer),
        }
