"""The prompt templates of one `optimize_prompts` call as one skill, and back.

MLflow hands an optimizer `{prompt name: template}`, a chat prompt's template being its list of
messages as JSON. One text template is the skill as it is. Several templates, or a chat
prompt, are a skill of several parts (`stratune_core/records/parts.py`): a part per text
template, named as the prompt, and a part per chat message, `NAME/1-system`, `NAME/2-user`, so
that the optimizer edits message texts and never the JSON around them. Each part keeps the
template variables it holds (`{{question}}`), which every candidate must keep.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from stratune_core.records.errors import TaskDataError
from stratune_core.records.parts import NAME, Placeholders, SkillParts, render_parts

# MLflow's own pattern for a template variable (mlflow.prompt.constants
# PROMPT_TEMPLATE_VARIABLE_PATTERN), copied so that a recorded run replays without MLflow
VARIABLE = re.compile(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*(?:\.[a-zA-Z_][a-zA-Z0-9_]*)*)\s*\}\}")


def _messages(name: str, template: str) -> list[dict[str, Any]] | None:
    """A chat template's messages, or None for a text template."""
    try:
        value = json.loads(template)
    except ValueError:
        return None
    if not (isinstance(value, list) and value and all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and "content" in m
            for m in value)):
        return None
    for number, message in enumerate(value, 1):
        if not isinstance(message["content"], str):
            raise TaskDataError(f"prompt {name!r}: message {number} holds content that is not "
                                "text; StraTune learns text templates and text chat messages")
    return value


def _part_texts(prompts: Mapping[str, str]) -> dict[str, str]:
    parts: dict[str, str] = {}
    for name, template in prompts.items():
        if not NAME.match(name):
            raise TaskDataError(f"prompt {name!r}: a name StraTune cannot use as a part name; "
                                "start it with a letter, a digit or _")
        messages = _messages(name, template)
        if messages is None:
            parts[name] = template
            continue
        for number, message in enumerate(messages, 1):
            parts[f"{name}/{number}-{message['role']}"] = message["content"]
    return parts


def skill_of(prompts: Mapping[str, str]) -> tuple[str, Placeholders]:
    """The skill document of `prompts` and the variables each of its parts keeps."""
    if not prompts:
        raise TaskDataError("optimize_prompts gave no prompt templates; pass prompt_uris=[...]")
    parts = _part_texts(prompts)
    if len(prompts) == 1 and list(parts) == list(prompts):  # one text template: the skill
        (text,) = parts.values()
        return text, (("", _variables(text)),) if _variables(text) else ()
    try:
        document = render_parts(parts)
    except ValueError as exc:
        raise TaskDataError(f"prompt templates: {exc}") from None
    kept = tuple((name, _variables(text)) for name, text in parts.items() if _variables(text))
    return document, kept


def templates_of(document: str, prompts: Mapping[str, str]) -> dict[str, str]:
    """The templates a skill document stands for, shaped as the initial `prompts`: a chat
    prompt stays its JSON list of messages, each message's content from its part. A part the
    run left as it was keeps its exact text (reading a part drops the blank lines around it)."""
    original = _part_texts(prompts)
    if len(prompts) == 1 and list(original) == list(prompts):
        return {name: document for name in prompts}
    texts = SkillParts.read(document).as_dict()
    for name, text in original.items():
        if texts.get(name) == text.strip("\n"):
            texts[name] = text
    out: dict[str, str] = {}
    for name, template in prompts.items():
        messages = _messages(name, template)
        if messages is None:
            out[name] = texts[name]
            continue
        made = [{**m, "content": texts[f"{name}/{i}-{m['role']}"]}
                for i, m in enumerate(messages, 1)]
        out[name] = template if made == messages else json.dumps(made, ensure_ascii=False)
    return out


def _variables(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(m.group(0) for m in VARIABLE.finditer(text)))
