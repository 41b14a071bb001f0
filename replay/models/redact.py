"""Keys never reach disk or output: model specs are stored and shown without their secret options,
and any text printed after an error is scrubbed of them.

A spec option is secret when its name says so (`api_key`, `token`, `secret`, `password`, ...);
a URL's `user:password@` part is secret too. The environment variables the backends read keys
from are masked wherever their values would appear in a message.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

MASK = "***"
_SECRET_NAME = re.compile(r"key|token|secret|passw|credential|auth", re.IGNORECASE)
_SECRET_OPTION = re.compile(
    r"(?i)(\b[\w.-]*(?:key|token|secret|passw|credential|auth)[\w.-]*=)([^&\s'\"]+)")
_QUERY_SECRET = re.compile(
    r"(?i)([?&][\w.-]*(?:key|token|secret|passw|credential|auth)[\w.-]*=)([^&\s'\"]+)")
_USERINFO = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://)[^/@\s'\"]+@")
KEY_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY",
           "AWS_BEARER_TOKEN_BEDROCK", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")


def public_spec(spec: str) -> str:
    """`spec` without secret options (other options keep their exact spelling and order)."""
    head, sep, query = spec.partition("?")
    head = _USERINFO.sub(rf"\1{MASK}@", head)
    if not sep:
        return head
    kept = [part for part in query.split("&")
            if not _SECRET_NAME.search(part.partition("=")[0])]
    kept = [_USERINFO.sub(rf"\1{MASK}@", part) for part in kept]
    return head + ("?" + "&".join(kept) if kept else "")


def public_text(text: str, specs: Iterable[str]) -> str:
    """A file's text (a grid file) with each model spec it holds written as `public_spec` writes
    it in a manifest, and any secret option left in a spec's query (one spelt with escapes)
    masked."""
    for spec in sorted(set(specs), key=len, reverse=True):
        text = text.replace(spec, public_spec(spec))
    return _QUERY_SECRET.sub(rf"\1{MASK}", text)


def scrub(text: str) -> str:
    """`text` with secret spec options, URL passwords and key values from the environment masked."""
    text = _SECRET_OPTION.sub(rf"\1{MASK}", text)
    text = _USERINFO.sub(rf"\1{MASK}@", text)
    for name in KEY_ENV:
        value = os.environ.get(name, "")
        if len(value) >= 8:  # a short value could be an ordinary word in the message
            text = text.replace(value, MASK)
    return text
