"""Reading the optimizer's replies: the text between the last pair of a tag, every such text,
or (TextGrad's reading) the text after the first opening tag."""

from __future__ import annotations

import re


def last_block(text: str, tag: str) -> str | None:
    """The content of the last `<tag>...</tag>` in `text`, stripped; None if there is none or
    it is blank."""
    found = re.findall(rf"<{tag}>(.*?)</{tag}>", text, re.S)
    if not found:
        return None
    body = found[-1].strip()
    return body or None


def all_blocks(text: str, tag: str) -> tuple[str, ...]:
    """Every non-blank `<tag>...</tag>` content, in order."""
    return tuple(b.strip() for b in re.findall(rf"<{tag}>(.*?)</{tag}>", text, re.S) if b.strip())


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
