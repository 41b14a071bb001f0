"""The cache key: xxh3_128 of the canonical JSON of every output-affecting field of a `Request`.

One field list (`KEY_FIELDS`) drives the key, `explain_key` and the miss diff, so they can never
disagree. Left out on purpose: `kind` (accounting label), and everything that never reaches a
`Request` at all: credentials, base URLs, retry/timeout settings, `cache_control` markers.
"""

from __future__ import annotations

import json
from typing import Any

import xxhash

from llm_cache.records import (
    Block,
    Message,
    Request,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)

# Bump when the canonical document changes shape: old entries then simply stop matching.
KEY_SCHEMA_VERSION = 1
KEY_ALGORITHM = "xxh3_128"
KEY_FIELDS: tuple[str, ...] = (
    "role", "model", "system", "messages", "max_tokens", "temperature", "stop", "draw", "tools",
)


def _block_doc(block: Block) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if isinstance(block, ToolResultBlock):
        return {"type": "tool_result", "tool_use_id": block.tool_use_id,
                "content": block.content, "is_error": block.is_error}
    # Images are content-hashed so a stored key document stays small; a 128-bit digest of the
    # base64 text identifies the bytes as well as the bytes do.
    return {
        "type": "image",
        "media_type": block.media_type,
        "data_xxh3_128": xxhash.xxh3_128_hexdigest(block.data.encode("ascii")),
        "data_len": len(block.data),
    }


def _message_doc(message: Message) -> dict[str, Any]:
    return {"role": message.role, "content": [_block_doc(b) for b in message.content]}


def key_document(request: Request) -> dict[str, Any]:
    """The plain-JSON document the key hashes (schema version included)."""
    # float() makes 0 and 0.0 one value; None stays distinct from 0.0 (not sent vs sent).
    temperature = None if request.temperature is None else float(request.temperature)
    document: dict[str, Any] = {
        "v": KEY_SCHEMA_VERSION,
        "role": request.role.value,
        "model": request.model,
        "system": request.system,
        "messages": [_message_doc(m) for m in request.messages],
        "max_tokens": int(request.max_tokens),
        "temperature": temperature,
        "stop": list(request.stop),
        "draw": int(request.draw),
    }
    # Present only when tools are offered: every request without them keeps the key it had.
    if request.tools:
        document["tools"] = [_tool_doc(t) for t in request.tools]
    return document


def _tool_doc(tool: ToolSpec) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "schema": tool.schema}


# One encoder, built once: `json.dumps` with any option builds a new `JSONEncoder` per call,
# which cost as much as the encoding itself on a replay's one key per call.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(document: dict[str, Any]) -> str:
    return _CANONICAL.encode(document)


def canonical_request(request: Request) -> str:
    return canonical_json(key_document(request))


def key_of_canonical(canonical: str) -> str:
    return xxhash.xxh3_128_hexdigest(canonical.encode("utf-8"))


def request_key(request: Request) -> str:
    """32 lowercase hex chars; stable across processes and machines (no `hash()`)."""
    return key_of_canonical(canonical_request(request))


def _summary(value: Any, limit: int = 72) -> str:
    text = json.dumps(value, ensure_ascii=False)
    if len(text) <= limit:
        return text
    digest = xxhash.xxh3_64_hexdigest(text.encode("utf-8"))
    return f"{text[: limit - 30]}… ({len(text)} chars, xxh3_64 {digest})"


def explain_document(document: dict[str, Any]) -> str:
    """Human-readable list of what went into a key, one component per line."""
    canonical = canonical_json(document)
    lines = [
        f"key        {key_of_canonical(canonical)}",
        f"algorithm  {KEY_ALGORITHM} of canonical JSON (sorted keys, no spaces, UTF-8)",
        f"schema     v{document.get('v')}",
    ]
    for name in KEY_FIELDS:
        lines.append(f"{name:<10} {_summary(document.get(name))}")
    lines.append("not in key kind, credentials, base_url, retries, timeouts, cache_control")
    return "\n".join(lines)


def explain_key(request: Request) -> str:
    return explain_document(key_document(request))


def differing_fields(a: dict[str, Any], b: dict[str, Any]) -> tuple[str, ...]:
    """Top-level key fields whose values differ (the schema version counts as a field)."""
    names = ("v", *KEY_FIELDS)
    return tuple(n for n in names if a.get(n) != b.get(n))
