"""TextGrad's reading of an update reply: the text after the first opening tag, as its released
optimizer reads it."""

from __future__ import annotations


def opened_block(text: str, tag: str) -> tuple[str | None, bool]:
    """The text after the first `<tag>`, up to the next `</tag>` or the end of the reply, and
    whether the closing tag was found; (None, False) without an opening tag or with nothing
    after it. TextGrad's released optimizer reads its update this way, so a reply cut at the
    token limit still yields a skill (the validation split then decides whether it stays)."""
    start = text.find(f"<{tag}>")
    if start < 0:
        return None, False
    rest = text[start + len(tag) + 2:]
    end = rest.find(f"</{tag}>")
    body = (rest if end < 0 else rest[:end]).strip()
    return (body or None), end >= 0
