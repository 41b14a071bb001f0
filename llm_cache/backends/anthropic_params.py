"""Requests to `messages.create` keyword arguments and `Message`s back to responses (pure).

`temperature` is never a typed kwarg (SDK >= 1 rejects it); it goes through `extra_body` and
only when the request sets it. The skill (system) block carries an explicit `cache_control` when
it is long enough for the model's prompt-cache minimum (a top-level marker would land on the
per-task message and pay a cache write every call).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from llm_cache.backends.base import system_text
from llm_cache.backends.tool_calls import tool_call
from llm_cache.records import (
    Block,
    Request,
    Response,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

# Characters per token used to decide whether a skill reaches the cache minimum. Deliberately
# low (real English is ~4): a marker on a too-short prefix is free, a missing one costs reads.
CHARS_PER_TOKEN_LOWER_BOUND = 3
NO_CACHING = 1 << 62  # a minimum no skill reaches

# Timeouts. The SDK's default (600 s, connect 5 s) is lost as soon as a float is passed, and a
# flat 600 s read means minutes of silence per try on a stalled endpoint. The read timeout
# scales with the output asked for, at the throughput the SDK itself assumes for non-streaming
# calls (128,000 tokens an hour, `_calculate_nonstreaming_timeout`), plus two minutes for the
# prompt, capped at the SDK's 600 s.
CONNECT_TIMEOUT = 5.0
MAX_READ_TIMEOUT = 600.0
PROMPT_ALLOWANCE = 120.0
SDK_TOKENS_PER_HOUR = 128_000


def read_timeout_for(max_tokens: int) -> float:
    return min(MAX_READ_TIMEOUT, PROMPT_ALLOWANCE + 3600.0 * max_tokens / SDK_TOKENS_PER_HOUR)


class MalformedResponse(Exception):
    """An HTTP 200 whose body is not a Messages API message (a proxy page, the wrong URL)."""


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
    if request.tools:
        params["tools"] = [{"name": t.name, "description": t.description,
                            "input_schema": json.loads(t.schema)} for t in request.tools]
    system = system_text(request)
    if system is not None:
        block: dict[str, Any] = {"type": "text", "text": system}
        if len(system) // CHARS_PER_TOKEN_LOWER_BOUND >= cache_min_tokens:
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


def _block_param(block: Block) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUseBlock):
        value = json.loads(block.input)
        return {"type": "tool_use", "id": block.id, "name": block.name,
                "input": value if isinstance(value, dict) else {}}
    if isinstance(block, ToolResultBlock):
        return {"type": "tool_result", "tool_use_id": block.tool_use_id,
                "content": block.content, "is_error": block.is_error}
    return {"type": "image",
            "source": {"type": "base64", "media_type": block.media_type, "data": block.data}}


def to_response(message: Any) -> Response:
    if isinstance(message, str):
        # The SDK hands back the raw text when a 200 is not JSON.
        head = " ".join(message.split())[:80]
        raise MalformedResponse(f"HTTP 200 whose body is not JSON ({head!r})")
    usage = getattr(message, "usage", None)
    content = getattr(message, "content", None)
    if usage is None or not isinstance(content, list):
        raise MalformedResponse("HTTP 200 whose JSON body is not a Messages API message "
                                "(no content or usage)")
    return Response(
        text="".join(b.text for b in content if getattr(b, "type", "") == "text"),
        stop_reason=message.stop_reason or "end_turn",
        model=message.model or "",
        tool_calls=tuple(tool_call(b.id, b.name, b.input) for b in content
                         if getattr(b, "type", "") == "tool_use"),
        usage=Usage(
            input_tokens=usage.input_tokens or 0,
            output_tokens=usage.output_tokens or 0,
            cache_write_tokens=getattr(usage, "cache_creation_input_tokens", 0) or 0,
            cache_read_tokens=getattr(usage, "cache_read_input_tokens", 0) or 0,
        ),
    )


def response_of_body(http_response: Any) -> Response:
    """`to_response` of a raw 200 read as plain JSON (what `messages.with_raw_response` gives).

    The SDK's own parse builds a pydantic `Message` field by field (`construct_type`), about a
    tenth of a call's client CPU; the `Response` needs four fields of it. The body is read as
    the SDK reads it: JSON when the content type says so, else JSON if it parses, else text.
    """
    content_type = http_response.headers.get("content-type", "*").split(";")[0]
    if content_type.lower().endswith("json"):
        data = http_response.json()
    else:
        try:
            data = http_response.json()
        except ValueError:
            return to_response(http_response.text)
    usage = data.get("usage") if isinstance(data, dict) else None
    content = data.get("content") if isinstance(data, dict) else None
    if not isinstance(usage, dict) or not isinstance(content, list):
        return to_response(None)
    return Response(
        text="".join(b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text"),
        stop_reason=data.get("stop_reason") or "end_turn",
        model=data.get("model") or "",
        tool_calls=tuple(tool_call(b.get("id", ""), b.get("name", ""), b.get("input"))
                         for b in content if isinstance(b, dict) and b.get("type") == "tool_use"),
        usage=Usage(
            input_tokens=usage.get("input_tokens") or 0,
            output_tokens=usage.get("output_tokens") or 0,
            cache_write_tokens=usage.get("cache_creation_input_tokens") or 0,
            cache_read_tokens=usage.get("cache_read_input_tokens") or 0,
        ),
    )
