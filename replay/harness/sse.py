"""A Messages API message as the streaming API sends it (server-sent events), for a client that
asked for `"stream": true`: message_start, one content block's start, deltas and stop per
block (text, tool_use, thinking), message_delta with the stop reason and usage, message_stop."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def _event(kind: str, data: Mapping[str, Any]) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"


def _block(index: int, block: Mapping[str, Any]) -> list[str]:
    kind = block.get("type")
    if kind == "tool_use":
        start = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block.get("input", {}))}
    elif kind == "thinking":
        start = {**block, "thinking": "", "signature": ""}
        delta = {"type": "thinking_delta", "thinking": block.get("thinking", "")}
    elif kind == "text":
        start = {**block, "text": ""}
        delta = {"type": "text_delta", "text": block.get("text", "")}
    else:  # a block the stream does not delta (redacted thinking, server tools): whole
        return [_event("content_block_start", {"index": index, "content_block": dict(block)}),
                _event("content_block_stop", {"index": index})]
    out = [_event("content_block_start", {"index": index, "content_block": start}),
           _event("content_block_delta", {"index": index, "delta": delta})]
    if kind == "thinking" and block.get("signature"):
        out.append(_event("content_block_delta", {"index": index, "delta": {
            "type": "signature_delta", "signature": block["signature"]}}))
    out.append(_event("content_block_stop", {"index": index}))
    return out


def stream(message: Mapping[str, Any]) -> bytes:
    usage = dict(message.get("usage") or {})
    head = {**message, "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {**usage, "output_tokens": 0}}
    events = [_event("message_start", {"message": head})]
    for index, block in enumerate(message.get("content") or ()):
        events.extend(_block(index, block))
    events.append(_event("message_delta", {
        "delta": {"stop_reason": message.get("stop_reason"),
                  "stop_sequence": message.get("stop_sequence")},
        "usage": {"output_tokens": usage.get("output_tokens", 0)}}))
    events.append(_event("message_stop", {}))
    return "".join(events).encode("utf-8")
