"""Candidate patches: the tag format the optimizer writes, and applying a patch to a skill.

A candidate is its parent skill plus a patch (paper App. A.2). Tags rather than JSON because a skill
is free text full of quotes, newlines and braces that small local models cannot escape reliably;
tag contents are taken verbatim. Parsing is lenient about the wrapping (prose, code fences, CRLF,
attribute quoting, a missing final closing tag); applying is strict, because an edit whose target
text is ambiguous or missing cannot be applied in a way anyone could check.
"""

from __future__ import annotations

import enum
import re

from attrs import field, frozen

from stratune_core.records.enums import Form, Reason
from stratune_core.records.errors import StraTuneError
from stratune_core.records.form_spec import form_in_label


class EditOp(enum.Enum):
    REPLACE = "replace"
    INSERT_AFTER = "insert_after"
    APPEND = "append"
    REWRITE = "rewrite"


@frozen(kw_only=True)
class Edit:
    op: EditOp
    new: str
    old: str = ""  # the replaced text (REPLACE) or the anchor (INSERT_AFTER)


@frozen(kw_only=True)
class Patch:
    edits: tuple[Edit, ...] = field(converter=tuple)

    @property
    def is_rewrite(self) -> bool:
        return any(e.op is EditOp.REWRITE for e in self.edits)


@frozen(kw_only=True)
class RawCandidate:
    """One `<candidate>` block as the optimizer wrote it, before any validation."""

    form: Form | None
    theme: str
    sources: tuple[str, ...] = field(converter=tuple)
    patch: Patch | None
    error: str = ""  # why `patch` is None


class PatchError(StraTuneError):
    """A patch cannot be applied; `reason` goes into the history, `detail` to the optimizer/viewer."""

    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(f"{reason.value}: {detail}")
        self.reason = reason
        self.detail = detail


# ---------------------------------------------------------------------------------------------
# Parsing

_CANDIDATE_OPEN = re.compile(r"<candidate\b[^>]*>", re.I)
_CANDIDATE_CLOSE = re.compile(r"</candidate\s*>", re.I)
_BODY_OPEN = re.compile(r"<(edit|rewrite)\b([^>]*)>", re.I)
_OP_ATTR = re.compile(r"""\bop\s*=\s*(?:"([^"]*)"|'([^']*)'|([\w-]+))""", re.I)
_FENCE = re.compile(r"^\s*```[\w+-]*\s*$")
_TAIL_FENCE = re.compile(r"\n[ \t]*```[ \t]*\s*\Z")
_ANY_TAG = re.compile(r"<(?:form|theme|sources|edit|rewrite)\b", re.I)
_OPS = {op.value: op for op in EditOp}


def _trim(text: str) -> str:
    """Drop leading and trailing blank lines (and a code fence wrapping the whole content); keep
    everything else, including the first line's indentation, verbatim."""
    text = re.sub(r"\A[ \t]*\n(?:[ \t]*\n)*", "", text)
    text = re.sub(r"(?:\n[ \t]*)+\Z", "", text)
    lines = text.split("\n")
    if len(lines) >= 2 and _FENCE.match(lines[0]) and _FENCE.match(lines[-1]):
        return _trim("\n".join(lines[1:-1]))
    return text


def _close_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"</{name}\s*>", re.I)


def _tag(body: str, name: str, *, to_end: bool = False) -> str | None:
    """Content of the first `<name>` in `body`; with `to_end`, a missing close tag means "up to
    the end of `body`" (models often stop before the last closing tag)."""
    m = re.search(rf"<{name}\s*>", body, re.I)
    if m is None:
        return None
    close = _close_pattern(name).search(body, m.end())
    if close is None:
        return _trim(body[m.end() :]) if to_end else None
    return _trim(body[m.end() : close.start()])


def _split_blocks(text: str) -> list[str]:
    opens = list(_CANDIDATE_OPEN.finditer(text))
    if not opens:
        # A lone patch without the wrapper is still a usable candidate.
        return [text] if _BODY_OPEN.search(text) else []
    blocks = []
    for k, m in enumerate(opens):
        limit = opens[k + 1].start() if k + 1 < len(opens) else len(text)
        close = _CANDIDATE_CLOSE.search(text, m.end(), limit)
        blocks.append(text[m.end() : close.start() if close else limit])
    return blocks


def _edit(kind: str, attrs_text: str, body: str, index: int) -> Edit | str:
    """One `<edit>`/`<rewrite>` element, or an error message naming it."""
    where = f"edit {index}"
    if kind == "rewrite":
        return Edit(op=EditOp.REWRITE, new=_trim(body))
    m = _OP_ATTR.search(attrs_text)
    if m is None:
        return f'{where}: <edit> has no op attribute (use op="append", "replace" or "insert_after")'
    name = next(g for g in m.groups() if g is not None).strip().lower().replace("-", "_")
    op = _OPS.get(name)
    if op is None:
        return f"{where}: unknown op {name!r} (use append, replace, insert_after)"
    new = _tag(body, "new", to_end=True)
    if op is EditOp.APPEND or op is EditOp.REWRITE:
        return Edit(op=op, new=_trim(body) if new is None else new)
    old_name = "old" if op is EditOp.REPLACE else "anchor"
    old = _tag(body, old_name)
    if old is None and op is EditOp.INSERT_AFTER:
        old = _tag(body, "old")  # models reuse the replace vocabulary
    if old is None and new is None and (text := _trim(body)) and "<" not in text:
        # Plain text with no part naming where it goes: the one local edit that reading allows is
        # adding it (weak optimizers call adding a rule "replace"; a repair turn does not move
        # them, they copy their first reply back).
        return Edit(op=EditOp.APPEND, new=text)
    if old is None:
        return f"{where} ({op.value}): missing <{old_name}>...</{old_name}>"
    if new is None:
        return f"{where} ({op.value}): missing <new>...</new>"
    return Edit(op=op, old=old, new=new)


def _bodies(block: str) -> tuple[list[Edit], str, str]:
    """(edits, error, the block with every edit element removed)."""
    edits: list[Edit] = []
    rest: list[str] = []
    pos = 0
    while (m := _BODY_OPEN.search(block, pos)) is not None:
        kind = m.group(1).lower()
        rest.append(block[pos : m.start()])
        close = _close_pattern(kind).search(block, m.end())
        nxt = _BODY_OPEN.search(block, m.end())
        if close is None or (nxt is not None and nxt.start() < close.start()):
            if nxt is not None:
                return edits, f"edit {len(edits) + 1}: <{kind}> is not closed", ""
            end = len(block)  # only the last element may lack its closing tag
        else:
            end = close.start()
        body = block[m.end() : end]
        if end == len(block):  # unclosed: a fence that wrapped the whole reply is not content
            body = _TAIL_FENCE.sub("", body)
        item = _edit(kind, m.group(2), body, len(edits) + 1)
        if isinstance(item, str):
            return edits, item, ""
        edits.append(item)
        pos = close.end() if close is not None and end == close.start() else len(block)
    rest.append(block[pos:])
    return edits, "", "".join(rest)


def _sources(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    parts = re.split(r"[\s,;]+", text)
    return tuple(p.strip("[]()'\"") for p in parts if p.strip("[]()'\""))


def _candidate(block: str) -> RawCandidate:
    edits, error, rest = _bodies(block)
    head = rest if not error else block
    label = _tag(head, "form")
    if label is None:  # an unclosed <form> still names the form
        m = re.search(r"<form\s*>([^<\n]*)", head, re.I)
        label = m.group(1) if m else ""
    form = form_in_label(label)
    theme = " ".join((_tag(head, "theme") or "").split())
    sources = _sources(_tag(head, "sources"))
    if not error and not edits:
        error = "no <edit> or <rewrite> element in the candidate"
    if error:
        return RawCandidate(form=form, theme=theme, sources=sources, patch=None, error=error)
    return RawCandidate(form=form, theme=theme, sources=sources, patch=Patch(edits=tuple(edits)))


def parse_candidates(text: str) -> tuple[RawCandidate, ...]:
    """Every `<candidate>` block of a reply, each parsed on its own: a malformed block yields
    `patch=None` with `error` saying why, and never spoils its neighbours."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    # A block holding none of the candidate tags is prose that mentioned "<candidate>", not an
    # attempt at one; dropping it lets an all-prose reply trigger the caller's repair call.
    return tuple(_candidate(b) for b in _split_blocks(text) if _ANY_TAG.search(b))


# ---------------------------------------------------------------------------------------------
# Applying


def rewrite_cap(skill_text: str, factor: int = 4, slack: int = 10_000) -> int:
    """Longest rewrite accepted for a skill: max(factor * len, len + slack) characters."""
    n = len(skill_text)
    return max(factor * n, n + slack)


def _locate(text: str, needle: str, where: str, what: str) -> int:
    """Start of the only occurrence of `needle` (overlapping occurrences count)."""
    if not needle:
        raise PatchError(Reason.INVALID_PATCH, f"{where}: <{what}> is empty")
    first = text.find(needle)
    count, i = 0, first
    while i != -1 and count < 100:
        count += 1
        i = text.find(needle, i + 1)
    if count != 1:
        shown = needle if len(needle) <= 60 else needle[:57] + "..."
        times = "100+ times" if count >= 100 else f"{count} time{'s' if count != 1 else ''}"
        raise PatchError(
            Reason.INVALID_PATCH,
            f"{where}: <{what}> occurs {times} in the skill (must occur exactly once): {shown!r}",
        )
    return first


def _apply_one(text: str, edit: Edit, index: int) -> str:
    where = f"edit {index} ({edit.op.value})"
    if edit.op is EditOp.REPLACE:
        start = _locate(text, edit.old, where, "old")
        return text[:start] + edit.new + text[start + len(edit.old) :]
    new = edit.new.strip("\n")
    if not new.strip():
        raise PatchError(Reason.INVALID_PATCH, f"{where}: the new text is empty")
    if edit.op is EditOp.APPEND:
        head = text.rstrip("\n")
        return (head + "\n\n" if head else "") + new + "\n"
    # INSERT_AFTER: the new text becomes whole line(s) right after the line where the anchor
    # ends, so an anchor taken from mid-sentence never splits that sentence.
    end = _locate(text, edit.old, where, "anchor") + len(edit.old)
    if edit.old.endswith("\n"):
        point = end - 1
    else:
        nl = text.find("\n", end)
        point = len(text) if nl == -1 else nl
    return text[:point] + "\n" + new + text[point:]


def apply_patch(
    text: str, patch: Patch, *, max_edits: int = 6, rewrite_cap: int | None = None
) -> str:
    """The skill `text` with `patch` applied, edits in order, each checked against the text the
    previous edits produced. Raises PatchError (nothing is half-applied: the input is a str).

    A rewrite must be the patch's only edit; its result is the rewrite text with surrounding
    blank lines removed and one final newline. A change in leading/trailing whitespace alone
    counts as no change (UNCHANGED), since it would spend budget on an identical skill.
    """
    edits = patch.edits
    if not edits:
        raise PatchError(Reason.INVALID_PATCH, "the patch has no edits")
    if patch.is_rewrite:
        if len(edits) != 1:
            raise PatchError(
                Reason.INVALID_PATCH, f"a rewrite must be the only edit, got {len(edits)} edits"
            )
        new = edits[0].new.strip("\n")
        if not new.strip():
            raise PatchError(Reason.INVALID_PATCH, "edit 1 (rewrite): the new skill is empty")
        if rewrite_cap is not None and len(new) > rewrite_cap:
            raise PatchError(
                Reason.REWRITE_TOO_LONG,
                f"edit 1 (rewrite): {len(new)} characters, at most {rewrite_cap} allowed",
            )
        result = new + "\n"
    else:
        if len(edits) > max_edits:
            raise PatchError(
                Reason.INVALID_PATCH, f"{len(edits)} edits, at most {max_edits} allowed"
            )
        result = text
        for i, edit in enumerate(edits, start=1):
            result = _apply_one(result, edit, i)
    if result.strip() == text.strip():
        raise PatchError(Reason.UNCHANGED, "the patch leaves the skill unchanged")
    return result
