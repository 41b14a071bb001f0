"""OpenAI-compatible `/v1/chat/completions` (vLLM, SGLang, ollama, llama.cpp server).

The way to scale target executions out to a GPU cluster: point several specs at the servers.
Uses `httpx2`, which the anthropic SDK already installs, so no new dependency.
"""

from __future__ import annotations

import json
import os
from typing import Any

from llm_cache.backends.base import refuse_blank_text, system_text
from llm_cache.records import ImageBlock, Request, Response, TextBlock, Usage
from llm_cache.retry import RetryDecision
from llm_cache.spec import ModelSpec

_FINISH = {"stop": "end_turn", "length": "max_tokens", "content_filter": "refusal",
           "tool_calls": "tool_use"}


class OpenAIStatusError(Exception):
    def __init__(self, status: int, body: str, retry_after: float | None) -> None:
        super().__init__(f"HTTP {status}: {body[:200]}")
        self.status = status
        self.body = body
        self.retry_after = retry_after


def chat_url(base_url: str) -> str:
    base = base_url.rstrip("/")
    return f"{base}/chat/completions" if base.endswith("/v1") else f"{base}/v1/chat/completions"


def build_body(request: Request, *, send_model: str) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    if (system := system_text(request)) is not None:
        messages.append({"role": "system", "content": system})
    for m in request.messages:
        if all(isinstance(b, TextBlock) for b in m.content):
            messages.append({"role": m.role, "content": m.text()})
        else:
            messages.append({"role": m.role, "content": [_part(b) for b in m.content]})
    body: dict[str, Any] = {"model": send_model, "messages": messages,
                            "max_tokens": request.max_tokens}
    if request.stop:
        body["stop"] = list(request.stop)
    if request.temperature is not None:
        body["temperature"] = float(request.temperature)
    return body


def _part(block: TextBlock | ImageBlock) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    url = f"data:{block.media_type};base64,{block.data}"
    return {"type": "image_url", "image_url": {"url": url}}


def parse_completion(data: dict[str, Any]) -> Response:
    choice = data["choices"][0]
    usage = data.get("usage") or {}
    prompt = int(usage.get("prompt_tokens") or 0)
    cached = int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
    return Response(
        text=choice["message"].get("content") or "",
        stop_reason=_FINISH.get(choice.get("finish_reason") or "stop", "end_turn"),
        model=str(data.get("model", "")),
        usage=Usage(input_tokens=prompt - cached, output_tokens=int(
            usage.get("completion_tokens") or 0), cache_read_tokens=cached),
    )


class OpenAICompatBackend:
    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str | None = None,
        timeout: float = 600.0,
        connect_timeout: float = 5.0,
        concurrency: int | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.name = f"openai:{model}@{base_url}"
        self.concurrency = concurrency
        self._url = chat_url(base_url)
        # Local servers need no key; hosted gateways read it from the usual variable.
        self._api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        # Read timeout for slow local servers; a dead host fails in seconds, not minutes.
        self._timeout = timeout
        self._connect_timeout = min(connect_timeout, timeout)
        self._client: Any = None

    @classmethod
    def from_spec(cls, spec: ModelSpec, **options: Any) -> OpenAICompatBackend:
        for name in ("timeout", "connect_timeout"):
            if name in options:
                options[name] = float(options[name])
        if "concurrency" in options:
            options["concurrency"] = int(options["concurrency"])
        return cls(spec.model, **options)

    async def acomplete(self, request: Request) -> Response:
        import httpx2

        refuse_blank_text(request, self.name)
        if self._client is None:
            self._client = httpx2.AsyncClient(
                timeout=httpx2.Timeout(self._timeout, connect=self._connect_timeout))
        headers = {"content-type": "application/json"}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        reply = await self._client.post(
            self._url, json=build_body(request, send_model=self.model), headers=headers
        )
        if reply.status_code != 200:
            after = reply.headers.get("retry-after")
            raise OpenAIStatusError(reply.status_code, reply.text,
                                    float(after) if after and after.isdigit() else None)
        return parse_completion(json.loads(reply.content))

    def classify(self, exc: BaseException) -> RetryDecision:
        import httpx2

        if isinstance(exc, OpenAIStatusError):
            if exc.status == 429:
                if "insufficient_quota" in exc.body:
                    return RetryDecision.no(f"{exc}; the account's quota is used up")
                return RetryDecision.rate_limit(str(exc), exc.retry_after)
            if exc.status in (408, 409) or exc.status >= 500:
                return RetryDecision.transient(str(exc), exc.retry_after)
            return RetryDecision.no(f"{exc}; check the model name, key and request")
        if isinstance(exc, httpx2.TransportError):  # connect/read errors and timeouts
            return RetryDecision.transient(f"{type(exc).__name__}: {exc}")
        if isinstance(exc, json.JSONDecodeError | KeyError | IndexError):
            return RetryDecision.transient(f"malformed response: {type(exc).__name__}")
        return RetryDecision.no(f"{type(exc).__name__}: {exc}")

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
