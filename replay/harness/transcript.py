"""An episode's transcript as the optimizer reads it (the CLI's stream-json messages,
compacted): whether the skill was loaded, each tool the model ran with its input and result
(errors marked), and the answer or the reason the episode failed."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

LIMIT = 1600
_INPUT, _RESULT = 160, 200


def _short(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _result_text(block: Mapping[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return " ".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return str(content or "")


def lines_of(messages: Sequence[Mapping[str, Any]], skill: str) -> list[str]:
    lines: list[str] = []
    loaded = False
    for message in messages:
        body = message.get("message")
        content = body.get("content") if isinstance(body, dict) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                name, given = block.get("name", "?"), block.get("input") or {}
                if name == "Skill":
                    loaded = loaded or given.get("skill") == skill
                    lines.append(f"loaded the skill {given.get('skill')!r}")
                    continue
                shown = given.get("command") if isinstance(given, dict) and "command" in given \
                    else json.dumps(given, ensure_ascii=False)
                lines.append(f"ran {name}: {_short(shown, _INPUT)}")
            elif block.get("type") == "tool_result":
                mark = "ERROR " if block.get("is_error") else ""
                text = _result_text(block)
                if not text.startswith("Launching skill"):
                    lines.append(f"  -> {mark}{_short(text, _RESULT)}")
    if not loaded:
        lines.insert(0, f"the skill {skill!r} was never loaded (its description decides that)")
    return lines


def render(messages: Sequence[Mapping[str, Any]], skill: str, answer: str, error: str) -> str:
    lines = lines_of(messages, skill)
    lines.append(f"failed: {error}" if error else f"final answer: {_short(answer, 240) or '(empty)'}")
    dropped = 0
    while len("\n".join(lines)) > LIMIT and len(lines) > 2:
        del lines[len(lines) // 2]
        dropped += 1
    if dropped:
        lines.insert(len(lines) // 2, f"… ({dropped} lines left out)")
    return "\n".join(lines)
