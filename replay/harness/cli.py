"""The Claude Code CLI that the `claude-agent-sdk` wheel bundles (extra `claude-code`): where it
is, its version, and the one-line refusals when it is missing or too old."""

from __future__ import annotations

import functools
from pathlib import Path

from stratune_core.records.errors import ConfigError

INSTALL = "pip install 'stratune[claude-code]'"
MIN_VERSION = (2, 1, 300)  # the oldest CLI whose requests and skill loading were measured


@functools.cache
def cli_path() -> Path:
    try:
        import claude_agent_sdk
    except ImportError:
        raise ConfigError(f"claude-code: targets run the Claude Code CLI of the claude-agent-sdk "
                          f"wheel; install it: {INSTALL}") from None
    path = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    if not path.is_file():
        raise ConfigError(f"claude-code: {path} is missing (a claude-agent-sdk without the "
                          f"bundled CLI); reinstall it: {INSTALL}")
    return path


@functools.cache
def cli_version() -> str:
    marker = cli_path().parent / "claude.version"
    return marker.read_text(encoding="utf-8").strip() if marker.is_file() else ""


def check_version() -> str:
    """The CLI's version, or one line when it is older than the harness supports."""
    version = cli_version()
    try:
        numbers = tuple(int(x) for x in version.split()[0].split(".")[:3])
    except (ValueError, IndexError):
        raise ConfigError(f"claude-code: cannot read the CLI's version ({version!r}); "
                          f"reinstall: {INSTALL}") from None
    if numbers < MIN_VERSION:
        want = ".".join(map(str, MIN_VERSION))
        raise ConfigError(f"claude-code: CLI {version} is older than {want}, the oldest this "
                          f"harness supports; upgrade: pip install -U claude-agent-sdk")
    return version
