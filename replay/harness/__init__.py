"""Harness targets: the skill runs inside the real Claude Code CLI, each execution one episode
of the CLI in print mode, isolated, every API call of it through StraTune's cache."""

__all__ = ["backend", "cli", "episode", "launcher", "normalize", "proxy", "spec", "sse", "task",
           "transcript", "upstream"]
