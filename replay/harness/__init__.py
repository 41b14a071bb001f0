"""Harness targets: the skill runs inside the real Claude Code CLI, each execution one episode
of the CLI in print mode, isolated, every API call of it through StraTune's cache."""

__all__ = ["backend", "episode", "launcher", "normalize", "proxy", "skill_folder", "sse",
           "upstream"]
