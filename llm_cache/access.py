"""Whether a model can be reached at all, checked before a run directory is made (each
provider's `check`, `llm_cache/providers.py`): a Claude
API key that is set (an empty `ANTHROPIC_API_KEY` fails every call) and holds no newline or
space, a base URL from the environment that is one, a proxy that accepts a connection, and an
OpenAI-compatible server that accepts a connection (a closed port, an unknown host or a dead
proxy would fail each call only after a round of retries, some 35 s later)."""

from __future__ import annotations

import os
import socket
import urllib.request
from urllib.parse import urlsplit

from llm_cache.errors import SpecError
from llm_cache.model_spec import ModelSpec

KEY_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
REACH_SECONDS = 5.0  # the connect timeout of a first call
CLAUDE_API = "https://api.anthropic.com"


def check_anthropic(parsed: ModelSpec, public: str) -> None:
    """The Claude API: a key, keys and base URL that can be sent, and the proxy reachable."""
    check_key(parsed, public)
    check_secrets(parsed, public, ("api_key", *KEY_ENV))
    check_transport(_claude_base_url(parsed, public), parsed, public)


def check_bedrock(parsed: ModelSpec, public: str) -> None:
    check_secrets(parsed, public, ("api_key", "AWS_BEARER_TOKEN_BEDROCK"))
    if (url := parsed.option("base_url")) is not None:
        check_transport(url, parsed, public)


def _claude_base_url(parsed: ModelSpec, public: str) -> str:
    """`?base_url=` (checked when the spec was parsed), else ANTHROPIC_BASE_URL, which the SDK
    reads as it is: a space around it or a scheme other than http(s) failed each call late."""
    if (url := parsed.option("base_url")) is not None:
        return url
    url = os.environ.get("ANTHROPIC_BASE_URL")
    if not url:
        return CLAUDE_API
    if url != url.strip():
        raise SpecError(f"model spec {public!r}: ANTHROPIC_BASE_URL has spaces around it; "
                        "remove them")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SpecError(f"model spec {public!r}: ANTHROPIC_BASE_URL is not an http(s) URL "
                        "with a host; fix it or unset it")
    return url


def check_secrets(parsed: ModelSpec, public: str, names: tuple[str, ...]) -> None:
    """A key goes into an HTTP header, which cannot hold a newline, a space or any other
    control character (the client refuses it, and each call fails as a connection error after
    a round of retries): one line naming where the key came from, never the key."""
    # `?api_key=` is sent instead of the environment's keys when given
    for name in ("api_key",) if parsed.option("api_key") else names:
        value = parsed.option(name) if name == "api_key" else os.environ.get(name)
        if value and any(c.isspace() or not c.isprintable() for c in value):
            where = "?api_key=" if name == "api_key" else name
            raise SpecError(f"model spec {public!r}: the key in {where} holds a space, a "
                            "newline or a control character; set it to the key alone")


def check_transport(url: str, parsed: ModelSpec, public: str) -> None:
    """The proxy the client would go through for `url` (HTTP(S)_PROXY, ALL_PROXY, unless
    NO_PROXY names the host) accepts a connection: a dead proxy failed each call only after a
    round of retries, some 35 s later."""
    parts = urlsplit(url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(parts.hostname or ""):
        return
    where = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    try:
        port = where.port or (443 if where.scheme == "https" else 80)
    except ValueError:
        port = None
    if not where.hostname or port is None:
        raise SpecError(f"model spec {public!r}: the {parts.scheme} proxy in the environment "
                        "is not a URL with a host and port; fix it or unset it")
    _connect(where.hostname, port, parsed, public, what=f"the {parts.scheme} proxy ",
             fix="start it, or unset HTTPS_PROXY / HTTP_PROXY (or add the host to NO_PROXY)")


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
    check_secrets(parsed, public, ("api_key", "OPENAI_API_KEY"))
    parts = urlsplit(url)
    host = parts.hostname or ""
    if urllib.request.getproxies() and not urllib.request.proxy_bypass(host):
        check_transport(url, parsed, public)  # the client connects to the proxy instead
        return
    port = parts.port or (443 if parts.scheme == "https" else 80)
    _connect(host, port, parsed, public, what="", fix="start the server or fix the base URL")


def _connect(host: str, port: int, parsed: ModelSpec, public: str, *, what: str,
             fix: str) -> None:
    seconds = min(float(parsed.option("connect_timeout") or REACH_SECONDS), REACH_SECONDS)
    try:
        with socket.create_connection((host, port), timeout=seconds):
            pass
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise SpecError(f"model spec {public!r}: cannot connect to {what}{host}:{port} "
                        f"({why}); {fix}") from None
