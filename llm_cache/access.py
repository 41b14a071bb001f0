"""Whether a model can be reached at all, checked before a run directory is made (each
provider's `check`, `llm_cache/providers.py`): a Claude
API key that is set (an empty `ANTHROPIC_API_KEY` fails every call), and an OpenAI-compatible
server that accepts a connection (a closed port or an unknown host would fail each call only
after a round of retries, some 35 s later)."""

from __future__ import annotations

import os
import socket
import urllib.request
from urllib.parse import urlsplit

from llm_cache.errors import SpecError
from llm_cache.model_spec import ModelSpec

KEY_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
REACH_SECONDS = 5.0  # the connect timeout of a first call


def check_key(parsed: ModelSpec, public: str) -> None:
    """A Claude API model needs a key: `?api_key=`, or a non-empty ANTHROPIC_API_KEY (or
    ANTHROPIC_AUTH_TOKEN). A spec with its own `base_url` (a proxy or a gateway) may need
    none."""
    if parsed.option("api_key") or parsed.option("base_url"):
        return
    if any(os.environ.get(name, "").strip() for name in KEY_ENV):
        return
    empty = [name for name in KEY_ENV if name in os.environ]
    what = f"{empty[0]} is empty" if empty else "ANTHROPIC_API_KEY is not set"
    raise SpecError(f"model spec {public!r}: no API key ({what}); set ANTHROPIC_API_KEY to "
                      "your key or add ?api_key= to the spec")


def check_reachable(parsed: ModelSpec, public: str) -> None:
    """One TCP connection to the base URL's host and port (none through a proxy, which the
    client uses instead); one line when nothing listens there."""
    url = parsed.option("base_url") or ""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if urllib.request.getproxies() and not urllib.request.proxy_bypass(host):
        return
    port = parts.port or (443 if parts.scheme == "https" else 80)
    seconds = min(float(parsed.option("connect_timeout") or REACH_SECONDS), REACH_SECONDS)
    try:
        with socket.create_connection((host, port), timeout=seconds):
            pass
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise SpecError(f"model spec {public!r}: cannot connect to {host}:{port} ({why}); "
                          "start the server or fix the base URL") from None
