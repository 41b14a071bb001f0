"""A skill of several named parts, written as one document.

The optimizer reads and revises a skill as one text; a skill of several parts (a DSPy program's
instructions, one per predictor; an Agent Skills folder's description, body and references) is
that text with each part opened by a marker line of its own, `[[part: NAME]]`. Every form and
strategy then applies to the document unchanged, and a candidate is usable only if it keeps the
parts: the same names in the same order and no text before the first marker. A skill with no
marker line is one part, exactly the skill text it always was.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from attrs import frozen

# A part's name: letters, digits and `_ . / -`, so that a predictor's name or a file's path
# under the skill folder (`references/guide.md`) can name it.
_NAME = r"[A-Za-z0-9_][A-Za-z0-9_./-]*"
_MARKER = re.compile(rf"^\[\[part: ({_NAME})\]\][ \t]*$", re.M)
NAME = re.compile(rf"^{_NAME}$")


SCRIPTS = "scripts/"  # the parts that are a skill folder's scripts (they may be added)


def marker(name: str) -> str:
    return f"[[part: {name}]]"


@frozen
class SkillParts:
    """A skill document read into its parts: the names in order, each part's text (stripped of
    the blank lines around it) and any text before the first marker."""

    names: tuple[str, ...]
    texts: tuple[str, ...]
    preamble: str = ""

    @classmethod
    def read(cls, document: str) -> SkillParts:
        if "[[part: " not in document:  # a one-part skill: read on every target request
            return cls(names=(), texts=(), preamble=document)
        found = list(_MARKER.finditer(document))
        if not found:
            return cls(names=(), texts=(), preamble=document)
        names = tuple(m.group(1) for m in found)
        ends = [m.start() for m in found[1:]] + [len(document)]
        texts = tuple(document[m.end():end].strip("\n") for m, end in zip(found, ends, strict=True))
        return cls(names=names, texts=texts, preamble=document[:found[0].start()])

    def as_dict(self) -> dict[str, str]:
        return dict(zip(self.names, self.texts, strict=True))


def render_parts(parts: Mapping[str, str]) -> str:
    """The one document the optimizer revises, from named part texts (in the mapping's order)."""
    for name, text in parts.items():
        if not NAME.match(name):
            raise ValueError(f"part name {name!r}: use letters, digits and _ . / - only")
        if _MARKER.search(text):
            raise ValueError(f"part {name!r} holds a line that opens a part: `{marker('…')}`")
    return "\n\n".join(f"{marker(name)}\n{text}" for name, text in parts.items())


def part_names(document: str) -> tuple[str, ...]:
    return SkillParts.read(document).names


def as_used(document: str) -> str:
    """The text a target reads when the whole skill goes into one place (a system prompt): the
    parts in order without their markers. A one-part skill is returned as it is."""
    parts = SkillParts.read(document)
    if not parts.names:
        return document
    return "\n\n".join(text for text in parts.texts if text.strip())


def check_parts_kept(old: str, new: str) -> str | None:
    """None if `new` has the parts of `old` (same names, same order, nothing before the first
    marker), else what changed, in a few words the history and the repair prompt can show."""
    before, after = SkillParts.read(old), SkillParts.read(new)
    new_scripts = [n for n in after.names if n not in before.names and n.startswith(SCRIPTS)]
    if new_scripts and before.names and any(n.startswith(SCRIPTS) for n in before.names) \
            and [n for n in after.names if n not in new_scripts] == list(before.names) \
            and after.names[-len(new_scripts):] == tuple(new_scripts):
        # a skill that learns its scripts may add one, after its other parts
        after = SkillParts(names=before.names, texts=(), preamble=after.preamble)
    if before.names == after.names:
        if after.names and after.preamble.strip():
            return f"text before the first part marker `{marker(after.names[0])}`"
        return None
    dropped = [n for n in before.names if n not in after.names]
    added = [n for n in after.names if n not in before.names]
    if dropped:
        return f"part `{dropped[0]}` dropped or renamed; keep every `{marker('NAME')}` line"
    if added:
        tail = (" (a new script goes after every other part)" if added[0].startswith(SCRIPTS)
                else "")
        return f"part `{added[0]}` added; the skill's parts are fixed{tail}"
    return "parts reordered or repeated; keep every part once, in its place"


def script_problem(document: str) -> str | None:
    """The first Python script part (`scripts/*.py`) that does not compile, as one line; None
    when every one does. Checked before any execution: a script that cannot even be parsed
    would fail every episode that runs it."""
    parts = SkillParts.read(document)
    for name, text in zip(parts.names, parts.texts, strict=True):
        if not (name.startswith(SCRIPTS) and name.endswith(".py")):
            continue
        try:
            compile(text, name, "exec", dont_inherit=True)
        except SyntaxError as exc:
            return f"{name}:{exc.lineno}: {exc.msg}"
    return None


Placeholders = tuple[tuple[str, tuple[str, ...]], ...]  # part name ("" for the whole) -> texts


def check_placeholders_kept(document: str, placeholders: Placeholders) -> str | None:
    """None if each part of `document` still holds the placeholders `placeholders` names for
    it (`TaskInfo.placeholders`), else the first one missing, in a few words. A part that is
    gone is `check_parts_kept`'s to report."""
    parts = SkillParts.read(document)
    texts = parts.as_dict() if parts.names else {"": document}
    for name, pieces in placeholders:
        text = texts.get(name)
        for piece in () if text is None else pieces:
            if piece not in text:
                where = f" from part `{name}`" if name else ""
                return (f"placeholder `{piece}` dropped{where}; it is filled in with each input, "
                        "keep it as written")
    return None
