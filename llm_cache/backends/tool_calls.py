"""Tool calls in the providers' wire formats, shared by the backends: a model's call read back
with canonical arguments, and the chat-completions layout of tool calls and results."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from llm_cache.records import ImageBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock


def tool_call(call_id: str, name: str, arguments: Any) -> ToolUseBlock:
    """A model's tool call with its arguments as canonical JSON (sorted keys): the same call is
    the same bytes in the episode's later requests, whatever order the model wrote them in."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return ToolUseBlock(id=call_id, name=name, input=json.dumps(arguments))
    return ToolUseBlock(id=call_id, name=name, input=json.dumps(
        arguments if arguments is not None else {}, sort_keys=True, separators=(",", ":"),
        ensure_ascii=False))


def chat_messages(m: Message, part: Callable[[TextBlock | ImageBlock], dict[str, Any]]
                  ) -> list[dict[str, Any]]:
    """One message in the chat format: tool calls on the assistant message, each tool result a
    `tool` message of its own."""
    calls = [b for b in m.content if isinstance(b, ToolUseBlock)]
    results = [b for b in m.content if isinstance(b, ToolResultBlock)]
    rest = [b for b in m.content if isinstance(b, TextBlock | ImageBlock)]
    out: list[dict[str, Any]] = [
        {"role": "tool", "tool_call_id": r.tool_use_id, "content": r.content} for r in results]
    if calls:
        out.append({"role": "assistant", "content": "".join(
            b.text for b in rest if isinstance(b, TextBlock)) or None, "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.input}}
            for c in calls]})
    elif rest and all(isinstance(b, TextBlock) for b in rest):
        out.append({"role": m.role, "content": "".join(b.text for b in rest if
                                                       isinstance(b, TextBlock))})
    elif rest:
        out.append({"role": m.role, "content": [part(b) for b in rest]})
    return out
