"""The docs' pages and the README as text, and their fenced code blocks, for the tests that run
what the docs show."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"

_FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```", re.S | re.M)


def page(name: str) -> str:
    """A page of the docs site, e.g. `page("tasks.md")`."""
    return (DOCS / name).read_text(encoding="utf-8")


def texts() -> Iterator[tuple[str, str]]:
    """(name, text) of the README and of every page under docs/."""
    yield "README.md", README.read_text(encoding="utf-8")
    for path in sorted(DOCS.glob("*.md")):
        yield f"docs/{path.name}", path.read_text(encoding="utf-8")


def blocks(text: str) -> Iterator[tuple[str, str]]:
    """(language, body) of every fenced code block; the language is "" for a bare fence."""
    for found in _FENCE.finditer(text):
        yield found.group(1), found.group(2)


def block_after(text: str, marker: str, language: str = "") -> str:
    """The body of the first fenced block in `language` after `marker` (the page's own words,
    so a test names what it runs the way a reader finds it)."""
    start = text.index(marker)
    for lang, body in blocks(text[start:]):
        if lang == language:
            return body
    raise AssertionError(f"no ```{language} block after {marker!r}")
