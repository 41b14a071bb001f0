"""Reading the optimizer's replies: the text between the last pair of a tag, or every such text."""

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
