"""The tool inventory of an agent task as the optimizer reads it: each tool's name, parameters
(with their types and descriptions, from its schema) and what it does. Shown in feedback
preparation and generation whenever the task has tools, and nowhere otherwise, so the prompts of
a task without tools keep their bytes."""

from __future__ import annotations

import json
from collections.abc import Sequence

from llm_cache.records import ToolSpec
from stratune_core.prompts.budget import Part

TOOLS_HEAD = ("## The target's tools\nThe target runs under the skill as an agent: it may call "
              "these tools, reads their results and then answers; each failure's output below "
              "is its trajectory (its calls, their results, its answer).")


def _parameters(schema: str) -> str:
    try:
        data = json.loads(schema)
    except ValueError:
        return ""
    properties = data.get("properties") if isinstance(data, dict) else None
    if not isinstance(properties, dict):
        return ""
    required = set(data.get("required") or ())
    said = []
    for name, prop in properties.items():
        kind = prop.get("type", "any") if isinstance(prop, dict) else "any"
        note = prop.get("description", "") if isinstance(prop, dict) else ""
        optional = "" if name in required else ", optional"
        said.append(f"{name}: {kind}{optional}" + (f" ({note})" if note else ""))
    return "; ".join(said)


def inventory(tools: Sequence[ToolSpec]) -> str:
    return "\n".join(f"- {t.name}({_parameters(t.schema)}): {t.description}" for t in tools)


def tools_part(tools: Sequence[ToolSpec]) -> list[Part]:
    return [Part(text=f"{TOOLS_HEAD}\n{inventory(tools)}")] if tools else []
