"""Tools of agent-episode targets: the tools a task declares (Python callables, the sandboxed
`python` and `bash`), loading them from `--tools`, running one call safely, and the backend that
answers tool calls through the cache."""

__all__ = ["backend", "code_tools", "declared", "execution", "loading", "toolset"]
