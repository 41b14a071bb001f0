"""A candidate against its parent, side by side: one row per line pair, and the edit operations
(insert, delete, replace, with their line ranges) that turn the parent into the candidate.
One diff per part of a multi-part skill; parts left as they were are named, not shown."""

from __future__ import annotations

import difflib
from typing import Any

from stratune_core.records.parts import SkillParts


def _parts(text: str) -> list[tuple[str, str]]:
    parts = SkillParts.read(text)
    if not parts.names:
        return [("", text)]
    return list(zip(parts.names, parts.texts, strict=True))


def side_by_side(old: str, new: str) -> dict[str, Any]:
    """Rows `[tag, left line no., left text, right line no., right text]` (a number is None
    where that side has no line) and the operations `[tag, i1, i2, j1, j2]` (0-based, end
    exclusive, as difflib gives them)."""
    left, right = old.splitlines(), new.splitlines()
    rows: list[list[Any]] = []
    ops: list[list[Any]] = []
    matcher = difflib.SequenceMatcher(a=left, b=right, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            ops.append([tag, i1, i2, j1, j2])
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            has_left, has_right = i < i2, j < j2
            rows.append([tag, i + 1 if has_left else None, left[i] if has_left else "",
                         j + 1 if has_right else None, right[j] if has_right else ""])
    return {"rows": rows, "ops": ops}


def skill_diff(old: str, new: str) -> dict[str, Any]:
    """The candidate's diff against its parent, by part."""
    before = dict(_parts(old))
    parts, same = [], []
    for name, text in _parts(new):
        parent_text = before.get(name, "")
        if name and parent_text == text:
            same.append(name)
            continue
        parts.append({"part": name, **side_by_side(parent_text, text)})
    return {"parts": parts, "unchanged": same}


def parts_of(text: str) -> list[dict[str, str]]:
    """A skill's parts as `{"part", "text"}`; a one-part skill is one part without a name."""
    return [{"part": name, "text": part} for name, part in _parts(text)]
