"""Anthropic Messages API through the official SDK: API key or Bedrock (`AnthropicBedrock`).

SDK retries are off (`max_retries=0`): the client's retry layer is the only one. `temperature`
is never a typed kwarg (SDK >= 1 rejects it); it goes through `extra_body` and only when the
request sets it. The skill (system) block carries an explicit `cache_control` when it is long
enough for the model's prompt-cache minimum (a top-level marker would land on the per-task
message and pay a cache write every call).
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Mapping
from typing import Any

from llm_cache.prices import PriceTable, default_prices
from llm_cache.records import ImageBlock, Request, Response, TextBlock, Usage
from llm_cache.retry import RetryDecision
from llm_cache.spec import ModelSpec

# Characters per token used to decide whether a skill reaches the cache minimum. Deliberately
# low (real English is ~4): a marker on a too-short prefix is free, a missing one costs reads.
CHARS_PER_TOKEN_LOWER_BOUND = 3


def build_params(
    request: Request,
    *,
    send_model: str,
    cache_min_tokens: int,
    extra_body: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The `messages.create` keyword arguments for one request (pure; tested directly)."""
    params: dict[str, Any] = {
        "model": send_model,
        "max_tokens": request.max_tokens,
        "messages": [
            {"role": m.role, "content": [_block_param(b) for b in m.content]}
            for m in request.messages
        ],
    }
    if request.system:
        block: dict[str, Any] = {"type": "text", "text": request.system}
        if len(request.system) // CHARS_PER_TOKEN_LOWER_BOUND >= cache_min_tokens:
            block["cache_control"] = {"type": "ephemeral"}
        params["system"] = [block]
    if request.stop:
        params["stop_sequences"] = list(request.stop)
    body = dict(extra_body or {})
    if request.temperature is not None:
        body["temperature"] = float(request.temperature)
    if body:
        params["extra_body"] = body
    return params


NO_CACHING = 1 << 62  # a minimum no skill reaches


def _flag(name: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "on", "yes"):
        return True
    if text in ("0", "false", "off", "no"):
        return False
    raise ValueError(f"{name}={value!r}: use on or off")


def _block_param(block: TextBlock | ImageBlock) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    return {"type": "image",
            "source": {"type": "base64", "media_type": block.media_type, "data": block.data}}


def to_response(message: Any) -> Response:
    usage = message.usage
    return Response(
        text="".join(b.text for b in message.content if getattr(b, "type", "") == "text"),
        stop_reason=message.stop_reason or "end_turn",
        model=message.model or "",
        usage=Usage(
            input_tokens=usage.input_tokens or 0,
            output_tokens=usage.output_tokens or 0,
            cache_write_tokens=getattr(usage, "cache_creation_input_tokens", 0) or 0,
            cache_read_tokens=getattr(usage, "cache_read_input_tokens", 0) or 0,
        ),
    )


def _retry_after(headers: Any) -> float | None:
    if headers is None:
        return None
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return None if parsed is None else max(0.0, parsed.timestamp() - time.time())


def classify_anthropic(exc: BaseException) -> RetryDecision:
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        after = _retry_after(getattr(exc.response, "headers", None))
        text = f"HTTP {status} {getattr(exc, 'message', '')}".strip()
        if status == 429:
            if after is None:
                return RetryDecision.no(
                    f"{text}: 429 without retry-after (spend cap or quota); raise the limit"
                )
            return RetryDecision.rate_limit(text, after)
        if status in (408, 409) or status >= 500:
            return RetryDecision.transient(text, after)
        hint = {401: "check the API key", 403: "check the key's permissions",
                400: "fix the request", 404: "check the model id"}.get(status, "fix the request")
        return RetryDecision.no(f"{text}; {hint}")
    if isinstance(exc, anthropic.APIConnectionError):  # includes APITimeoutError
        return RetryDecision.transient(f"{type(exc).__name__}: {exc}")
    if isinstance(exc, anthropic.APIResponseValidationError | json.JSONDecodeError):
        # A truncated or malformed 200 body: the transport failed, the model did not.
        return RetryDecision.transient(f"malformed response: {type(exc).__name__}")
    return RetryDecision.no(f"{type(exc).__name__}: {exc}")


class AnthropicBackend:
    """One model on the Anthropic API or on Bedrock; clients are built lazily in the loop."""

    def __init__(
        self,
        model: str,
        *,
        provider: str = "anthropic",
        api_key: str | None = None,
        base_url: str | None = None,
        aws_region: str | None = None,
        timeout: float = 600.0,
        concurrency: int | None = None,
        canonical: str | None = None,
        bedrock_anthropic_version: str | None = None,
        prices: PriceTable | None = None,
        prompt_caching: bool = True,
    ) -> None:
        if provider not in ("anthropic", "bedrock"):
            raise ValueError(f"provider must be 'anthropic' or 'bedrock', got {provider!r}")
        self.model = model
        self.provider = provider
        self.name = f"{provider}:{model}"
        self.concurrency = concurrency
        self._api_key = api_key
        self._base_url = base_url
        self._aws_region = aws_region
        self._timeout = timeout
        prices = prices or default_prices()
        # prompt_caching=False never marks the skill: for endpoints that reject cache_control.
        self.cache_min_tokens = (prices.cache_min_tokens(canonical or model) if prompt_caching
                                 else NO_CACHING)
        # SDK 2.x sends anthropic_version 2026-10-21 in Bedrock bodies, which pre-4.7 Bedrock
        # models reject; the body override is the documented escape hatch.
        self._extra_body = (
            {"anthropic_version": bedrock_anthropic_version} if bedrock_anthropic_version else {}
        )
        self._client: Any = None

    @classmethod
    def from_spec(cls, spec: ModelSpec, **options: Any) -> AnthropicBackend:
        region = options.pop("region", None) or options.pop("aws_region", None)
        for name in ("timeout",):
            if name in options:
                options[name] = float(options[name])
        if "concurrency" in options:
            options["concurrency"] = int(options["concurrency"])
        if "prompt_caching" in options:
            options["prompt_caching"] = _flag("prompt_caching", options["prompt_caching"])
        return cls(spec.model, provider=spec.provider, aws_region=region,
                   canonical=spec.canonical, **options)

    def _make_client(self) -> Any:
        import anthropic

        common: dict[str, Any] = {"max_retries": 0, "timeout": self._timeout}
        if self._base_url is not None:
            common["base_url"] = self._base_url
        if self.provider == "bedrock":
            return anthropic.AsyncAnthropicBedrock(
                aws_region=self._aws_region, api_key=self._api_key, **common
            )
        return anthropic.AsyncAnthropic(api_key=self._api_key, **common)

    async def acomplete(self, request: Request) -> Response:
        if self._client is None:
            self._client = self._make_client()
        params = build_params(request, send_model=self.model,
                              cache_min_tokens=self.cache_min_tokens, extra_body=self._extra_body)
        message = await self._client.messages.create(**params)
        return to_response(message)

    def classify(self, exc: BaseException) -> RetryDecision:
        return classify_anthropic(exc)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
