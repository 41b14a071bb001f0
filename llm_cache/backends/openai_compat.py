"""OpenAI-compatible `/v1/chat/completions` (vLLM, SGLang, ollama, llama.cpp server).

The way to scale target executions out to a GPU cluster: point several specs at the servers.
Uses `httpx2`, which the anthropic SDK already installs, so no new dependency.

Sampling: every request is sent at the spec's temperature (default 0) and seed (default 0);
both are in the canonical model id, so in the cache key (`llm_cache.model_spec.openai_sampling`).

Context: when the window is known (`openai_window`: vLLM's `max_model_len`, llama-server's
`/props`, else the spec's `?n_ctx=`), `max_tokens` is lowered to what the prompt leaves, counted
by the server's own tokenizer, with room kept for the optimizer's repair turn; any server's
refusal of a request as too long is fitted the same way from the figures it gives, or stops the
run with one line saying which window the prompt needs and the server's flag that sets it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
from typing import Any
from urllib.parse import urlsplit

import attrs

from llm_cache.backends.base import BackendBase, refuse_blank_text, system_text
from llm_cache.backends.context import (
    ContextOverflowError,
    fit_max_tokens,
    needed_context,
    too_long,
)
from llm_cache.backends.openai_context import Overflow, parse_overflow, prompt_bound
from llm_cache.backends.openai_window import ServerWindow
from llm_cache.backends.tool_calls import chat_messages, tool_call
from llm_cache.credentials import without_credentials
from llm_cache.model_spec import ModelSpec, openai_sampling
from llm_cache.records import (
    ImageBlock,
    Request,
    Response,
    TextBlock,
    Usage,
)
from llm_cache.retry import RetryDecision

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


def build_body(request: Request, *, send_model: str, temperature: float = 0.0,
               seed: int | None = None) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    if (system := system_text(request)) is not None:
        messages.append({"role": "system", "content": system})
    for m in request.messages:
        messages.extend(chat_messages(m, _part))
    body: dict[str, Any] = {"model": send_model, "messages": messages,
                            "max_tokens": request.max_tokens}
    if request.tools:
        body["tools"] = [{"type": "function", "function": {
            "name": t.name, "description": t.description, "parameters": json.loads(t.schema)}}
            for t in request.tools]
    if request.stop:
        body["stop"] = list(request.stop)
    body["temperature"] = float(temperature if request.temperature is None
                                else request.temperature)
    if seed is not None:
        body["seed"] = seed
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
    calls = choice["message"].get("tool_calls") or ()
    return Response(
        tool_calls=tuple(tool_call(c.get("id") or f"call_{i}", c["function"]["name"],
                                   c["function"].get("arguments"))
                         for i, c in enumerate(calls)),
        text=choice["message"].get("content") or "",
        stop_reason=_FINISH.get(choice.get("finish_reason") or "stop", "end_turn"),
        model=str(data.get("model", "")),
        usage=Usage(input_tokens=prompt - cached, output_tokens=int(
            usage.get("completion_tokens") or 0), cache_read_tokens=cached),
    )


class OpenAICompatBackend(BackendBase):
    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str | None = None,
        timeout: float | None = None,
        connect_timeout: float = 5.0,
        concurrency: int | None = None,
        temperature: float = 0.0,
        seed: int | None = 0,
        n_ctx: int | None = None,
    ) -> None:
        self.model = model
        self.temperature = temperature
        self.seed = seed
        self.base_url = base_url
        # the name goes into messages and the cache: never the URL's password
        self.name = f"openai:{model}@{without_credentials(base_url)}"
        self.concurrency = concurrency
        self._url = chat_url(base_url)
        # Local servers need no key; hosted gateways read it from the usual variable.
        self._api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        # A dead host fails at connect, in seconds; the read timeout only bounds a slow reply.
        self._timeout = timeout if timeout is not None else default_read_timeout(base_url)
        self._connect_timeout = min(connect_timeout, self._timeout)
        self._client: Any = None
        self.window = ServerWindow(base_url, model, n_ctx=n_ctx,
                                   connect_timeout=self._connect_timeout)

    @classmethod
    def from_spec(cls, spec: ModelSpec, **options: Any) -> OpenAICompatBackend:
        for name in ("timeout", "connect_timeout"):
            if name in options:
                options[name] = float(options[name])
        for name in ("concurrency", "n_ctx"):
            if name in options:
                options[name] = int(options[name])
        sampling = {k: str(options.pop(k)) for k in ("temperature", "seed") if k in options}
        options["temperature"], options["seed"] = openai_sampling(sampling)
        return cls(spec.model, **options)

    @property
    def read_timeout(self) -> float:
        return self._timeout

    def context_tokens(self) -> int | None:
        """The server's context window (see `openai_window`), asked once; None when neither
        the server nor the spec says."""
        return self.window.tokens(self._headers())

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json"}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        return headers

    async def acomplete(self, request: Request) -> Response:
        import httpx2

        refuse_blank_text(request, self.name)
        if self._client is None:
            self._client = httpx2.AsyncClient(
                timeout=httpx2.Timeout(self._timeout, connect=self._connect_timeout))
        body = build_body(request, send_model=self.model, temperature=self.temperature,
                          seed=self.seed)
        where = f"{self.name} ({request.kind.value})"
        clamped = await self._fit(request, body, where)
        reply = await self._client.post(self._url, json=body, headers=self._headers())
        if reply.status_code != 200 and (overflow := parse_overflow(reply.text)) is not None:
            # Fit once from the figures the refusal gives; a second refusal is final.
            clamped = self._refit(request, overflow, clamped, where)
            body["max_tokens"] = clamped
            reply = await self._client.post(self._url, json=body, headers=self._headers())
            if reply.status_code != 200 and (again := parse_overflow(reply.text)) is not None:
                raise self._advice(again, where, request)
        if reply.status_code != 200:
            after = reply.headers.get("retry-after")
            raise OpenAIStatusError(reply.status_code, reply.text,
                                    float(after) if after and after.isdigit() else None)
        response = parse_completion(json.loads(reply.content))
        return attrs.evolve(response, clamped_max_tokens=clamped) if clamped else response

    async def _fit(self, request: Request, body: dict[str, Any], where: str) -> int | None:
        """Lower body's max_tokens to what the window leaves; the lowered value, or None."""
        window = await asyncio.to_thread(self.context_tokens)
        if window is None or _fits(request, prompt_bound(body), window):
            return None  # cannot overflow even at the bound: no need to count
        prompt = await self.window.count(self._client, self._headers(), body["messages"])
        if prompt is None:
            return None
        clamped = fit_max_tokens(request, prompt, window, where=where,
                                 setting=self.window.setting())
        if clamped is not None:
            body["max_tokens"] = clamped
        return clamped

    def _refit(self, request: Request, overflow: Overflow, clamped: int | None,
               where: str) -> int:
        context = overflow.context or self.context_tokens()
        if clamped is None and context and overflow.prompt_tokens:
            fitted = fit_max_tokens(request, overflow.prompt_tokens, context, where=where,
                                    setting=self.window.setting())
            if fitted is not None:
                return fitted
        raise self._advice(overflow, where, request)

    def _advice(self, overflow: Overflow, where: str, request: Request) -> ContextOverflowError:
        context = overflow.context or self.context_tokens()
        setting = self.window.setting()
        if context and overflow.prompt_tokens \
                and needed_context(overflow.prompt_tokens, request) > context:
            return too_long(where, overflow.prompt_tokens, context, request, setting=setting)
        said = overflow.message if len(overflow.message) <= 160 else overflow.message[:157] + "..."
        return ContextOverflowError(
            f"{where}: the server refuses the request as longer than its context ({said}); "
            f"raise {setting} or shorten the prompt",
            prompt_tokens=overflow.prompt_tokens, context=context)

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


def _fits(request: Request, prompt_tokens: int, window: int) -> bool:
    """Whether the request's own max_tokens fits beside a prompt of that many tokens."""
    try:
        return fit_max_tokens(request, prompt_tokens, window, where="", setting="") is None
    except ContextOverflowError:
        return False


HOSTED_READ_TIMEOUT = 600.0
# A server on this machine (llama-cpp-python's, llama-server, ollama on a CPU) may take many
# minutes for one long reply, and a reply sent again after a read timeout is generated again
# by a server that serves one request at a time: it gets an hour before the client gives up.
LOCAL_READ_TIMEOUT = 3600.0


def default_read_timeout(base_url: str) -> float:
    """The read timeout when the spec gives none: an hour for a server on this machine."""
    host = urlsplit(base_url).hostname or ""
    if host == "localhost":
        return LOCAL_READ_TIMEOUT
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    return LOCAL_READ_TIMEOUT if loopback else HOSTED_READ_TIMEOUT
