"""Tool calls with a local GGUF model: the request is rendered by the model's own chat template
with its tools (Qwen2.5's template lists them in `<tools>` and asks for each call as
`<tool_call>{"name": ..., "arguments": {...}}</tool_call>`; a tool result is a `tool` message,
which it wraps in `<tool_response>`), and the reply is read back leniently: small models write
the same JSON object in `<tool_call>` tags, in a ```json fence or bare, and any of the three is
taken as a call when it names a tool the request offers. The call ids are the turn and the
call's place in it (`call_2_0`), so the same reply gives the same ids.
"""

from __future__ import annotations

import json
import re
from typing import Any

from llm_cache.backends.base import system_text
from llm_cache.backends.tool_calls import tool_call
from llm_cache.records import Request, TextBlock, ToolResultBlock, ToolUseBlock

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCED = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.S)


def template_messages(request: Request) -> list[dict[str, Any]]:
    system = system_text(request)
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for m in request.messages:
        text = "".join(b.text for b in m.content if isinstance(b, TextBlock))
        calls = [b for b in m.content if isinstance(b, ToolUseBlock)]
        results = [b for b in m.content if isinstance(b, ToolResultBlock)]
        for r in results:
            out.append({"role": "tool", "content": r.content})
        if calls:
            out.append({"role": "assistant", "content": text, "tool_calls": [
                {"type": "function", "function": {"name": c.name,
                                                  "arguments": json.loads(c.input)}}
                for c in calls]})
        elif text or not results:
            out.append({"role": m.role, "content": text})
    return out


def template_tools(request: Request) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": json.loads(t.schema)}}
            for t in request.tools]


def _objects(text: str) -> list[tuple[int, int, str]]:
    """Every top-level `{...}` of `text` that parses as JSON, with its span."""
    found, depth, start = [], 0, -1
    for i, c in enumerate(text):
        if c == "{":
            depth, start = depth + 1, i if depth == 0 else start
        elif c == "}" and depth:
            depth -= 1
            if depth == 0:
                found.append((start, i + 1, text[start:i + 1]))
    return found


def _call(raw: str, names: set[str]) -> tuple[str, Any] | None:
    raw = raw.strip()
    tries = [raw, raw[1:-1]] if raw.startswith("{{") and raw.endswith("}}") else [raw]
    data: Any = None
    for attempt in tries:  # a doubled brace, as a template's escaping taught some models
        try:
            data = json.loads(attempt)
            break
        except ValueError:
            continue
    if isinstance(data, dict) and data.get("name") in names:
        arguments = data.get("arguments", data.get("parameters", {}))
        return str(data["name"]), arguments
    return None


def parse_reply(text: str, request: Request) -> tuple[str, tuple[ToolUseBlock, ...]]:
    """(the reply's text without its calls, the calls) of a model's raw output."""
    names = {t.name for t in request.tools}
    turn = sum(1 for m in request.messages if m.role == "assistant")
    spans: list[tuple[int, int]] = []
    calls: list[tuple[str, Any]] = []
    for pattern in (_TAGGED, _FENCED):
        for match in pattern.finditer(text):
            found = _call(match.group(1), names)
            if found is not None:
                calls.append(found)
                spans.append(match.span())
        if calls:
            break
    if not calls:
        for start, end, raw in _objects(text):
            found = _call(raw, names)
            if found is not None:
                calls.append(found)
                spans.append((start, end))
    rest, last = [], 0
    for start, end in sorted(spans):
        rest.append(text[last:start])
        last = end
    rest.append(text[last:])
    blocks = tuple(tool_call(f"call_{turn}_{k}", name, arguments)
                   for k, (name, arguments) in enumerate(calls))
    return "".join(rest).strip() if blocks else text, blocks
