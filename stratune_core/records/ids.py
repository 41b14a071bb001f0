"""Content identities: a skill is identified by the hash of its text."""

from __future__ import annotations

import xxhash


def text_id(text: str) -> str:
    """16 hex chars of xxh3-64 over the UTF-8 text. Stable across processes and machines."""
    return xxhash.xxh3_64_hexdigest(text.encode("utf-8"))
