"""What the cache writes to disk about how a model was reached never carries a credential: a
URL's `user:password@` part and any option named like a secret (`api_key=`, `token=`, ...) are
taken out of every text before it is stored (a cache entry's `backend`, the batch journal's).

This is the one door every provider's answers pass through, so a provider whose name holds its
base URL (an OpenAI-compatible server, `openai:MODEL@http://u:PW@host/v1`) cannot leak it.
"""

from __future__ import annotations

import re

MASK = "***"
_USERINFO = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://)[^/@\s'\"?#]+@")
_SECRET_OPTION = re.compile(
    r"(?i)(\b[\w.-]*(?:key|token|secret|passw|credential|auth)[\w.-]*=)([^&\s'\"]+)")


def without_credentials(text: str) -> str:
    """`text` with every URL's userinfo removed and secret-named options masked."""
    return _SECRET_OPTION.sub(rf"\1{MASK}", _USERINFO.sub(r"\1", text))
