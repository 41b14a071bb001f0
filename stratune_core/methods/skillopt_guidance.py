"""SkillOpt's protected guidance section: the slow update's epoch-level guidance lives at the end
of the skill between two marker lines, and step edits cannot change it. The released trainer has
such a section (microsoft/SkillOpt, `skillopt/optimizer/slow_update.py` writes it,
`skillopt/optimizer/skill.py` protects it): an edit whose target text lies inside it is skipped,
an appended edit goes before it, and marker text inside an edit is dropped. Our markers are our
own."""

from __future__ import annotations

import attrs

from stratune_core.operators.patches import Edit, Patch, apply_patch

GUIDANCE_OPEN = "<epoch_guidance>"
GUIDANCE_CLOSE = "</epoch_guidance>"


def split_guidance(skill: str) -> tuple[str, str]:
    """(the body, the guidance section with its markers, or "" without one)."""
    start = skill.find(GUIDANCE_OPEN)
    end = skill.find(GUIDANCE_CLOSE, start + 1) if start >= 0 else -1
    if start < 0 or end < 0:
        return skill, ""
    return skill[:start].rstrip(), skill[start:end + len(GUIDANCE_CLOSE)]


def guidance_of(skill: str) -> str:
    """The guidance the section holds ("" without a section)."""
    section = split_guidance(skill)[1]
    return section[len(GUIDANCE_OPEN):-len(GUIDANCE_CLOSE)].strip() if section else ""


def with_guidance(skill: str, guidance: str) -> str:
    """The skill with its guidance section replaced by (or, without one, ended with) `guidance`;
    exactly one section is left."""
    body = split_guidance(skill)[0]
    return f"{body.rstrip()}\n\n{GUIDANCE_OPEN}\n{guidance.strip()}\n{GUIDANCE_CLOSE}\n"


def apply_outside_guidance(skill: str, edit: Edit) -> str:
    """`edit` applied to the body only, the section kept as it was; raises PatchError (from
    `apply_patch`) when its target text is not in the body, as when it lies in the section."""
    body, section = split_guidance(skill)
    clean = attrs.evolve(edit, new=edit.new.replace(GUIDANCE_OPEN, "").replace(GUIDANCE_CLOSE, ""))
    changed = apply_patch(body if section else skill, Patch(edits=(clean,)))
    return f"{changed.rstrip()}\n\n{section}\n" if section else changed
