"""A DSPy program's tools (`dspy.ReAct`'s, any module's `tools` of `dspy.Tool`s) inside a
StraTune execution: each call the program makes is a `Role.TOOL` request through the run's
cache, answered by a tool backend over the program's own functions, so that rerunning the
program between waves, resuming or replaying runs no tool again (the cache answers), exactly
as its LM calls are answered from the replies so far (`engine.py`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import dspy
import xxhash

from llm_cache.records import CallKind, Message, Request, Role, ToolSpec
from replay.tools.backend import ToolBackend
from replay.tools.declared import DeclaredTool, canonical
from replay.tools.execution import result_text


def program_tools(program: dspy.Module) -> dict[str, dspy.Tool]:
    """Every `dspy.Tool` the program's modules hold, by name."""
    found: dict[str, dspy.Tool] = {}
    for _, module in [("", program), *program.named_sub_modules()]:
        tools = getattr(module, "tools", None)
        if isinstance(tools, dict):
            found.update({name: t for name, t in tools.items() if isinstance(t, dspy.Tool)})
    return found


def _fingerprint(tool: dspy.Tool) -> str:
    import inspect

    try:
        source = inspect.getsource(tool.func)
    except (OSError, TypeError):
        source = repr(tool.func)
    return xxhash.xxh3_64_hexdigest(f"{tool.name}\n{tool.args}\n{source}".encode())


def tool_request(tool: dspy.Tool, arguments: dict[str, Any], episode: str) -> Request:
    return Request(role=Role.TOOL, model=f"tool:{tool.name}@{_fingerprint(tool)}",
                   system=episode, messages=(Message.user(canonical(arguments)),),
                   max_tokens=1, kind=CallKind.TOOL_CALL)


def route_tools(program: dspy.Module, answer: Callable[[dspy.Tool, dict[str, Any]], Any]
                ) -> None:
    """Every tool of `program` (a copy the task owns) answers through `answer`."""
    for tool in program_tools(program).values():
        tool.func = (lambda t: lambda **kwargs: answer(t, kwargs))(tool)


def tool_backend(program: dspy.Module) -> ToolBackend:
    """The backend that runs the program's tools for real (a live run's cache misses)."""
    declared = []
    for tool in program_tools(program).values():
        func = tool.func

        def call(arguments: dict[str, Any], func: Callable[..., Any] = func) -> str:
            return result_text(func(**arguments))

        schema = {"type": "object", "properties": dict(tool.args)}
        declared.append(DeclaredTool(
            spec=ToolSpec(name=tool.name, description=tool.desc or "",
                          schema=json.dumps(schema, sort_keys=True)),
            call=call, pure=False, fingerprint=_fingerprint(tool)))
    return ToolBackend(declared)
