"""Tools a task declares: Python callables (`--tools module:attr`, `tools=[fn, ...]`) and the
sandboxed code tools (`python`, `bash`), each checked before anything is paid.

A callable's schema comes from its signature, type hints and docstring, built by the Anthropic
SDK's function-tool helper (pydantic underneath), which also validates each call's arguments
against it. A tool is refused in one line when it has a parameter without a type hint, takes
`*args`/`**kwargs`, has a name the providers refuse, or shares its name with another.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import xxhash
from attrs import frozen

from llm_cache.records import ToolSpec
from stratune_core.records.errors import ConfigError

# The names both tool APIs take (Anthropic's and OpenAI's function names)
NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
PURE_MARK = "__stratune_pure__"


@frozen(kw_only=True)
class DeclaredTool:
    """A tool as the run uses it: its spec (what the model sees), how a call runs, whether it is
    pure (replay recomputes its calls and compares), and a fingerprint of its definition."""

    spec: ToolSpec
    call: Callable[[dict[str, Any]], Any]  # arguments -> result (raises on a bad call)
    pure: bool
    fingerprint: str
    isolated: bool = False  # runs in the sandbox itself: no forked child around it

    @property
    def name(self) -> str:
        return self.spec.name


def tool(fn: Callable[..., Any] | None = None, *, pure: bool = False) -> Any:
    """`@stratune.tool(pure=True)`: marks a tool whose result depends only on its arguments,
    so that `replay` recomputes each recorded call and checks it (a plain function is impure:
    replay uses its recorded results without running it)."""
    def mark(f: Callable[..., Any]) -> Callable[..., Any]:
        setattr(f, PURE_MARK, pure)
        return f
    return mark if fn is None else mark(fn)


def canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _where(fn: Callable[..., Any]) -> str:
    module = getattr(fn, "__module__", "?")
    return f"tool {module}:{getattr(fn, '__qualname__', repr(fn))}"


def _check_signature(fn: Callable[..., Any]) -> None:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        raise ConfigError(f"{_where(fn)}: its signature cannot be read; give a plain function "
                          "with typed parameters") from None
    for name, param in signature.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ConfigError(f"{_where(fn)}: *{name} cannot be described to a model; give "
                              "named, typed parameters")
        if param.annotation is inspect.Parameter.empty:
            raise ConfigError(f"{_where(fn)}: parameter {name!r} has no type hint; add one "
                              "(its schema is built from the hints)")


def declare(fn: Callable[..., Any]) -> DeclaredTool:
    """The tool of one callable, or one line naming what to fix."""
    if not callable(fn):
        raise ConfigError(f"tool {fn!r}: not a callable; give functions")
    from anthropic import beta_tool

    _check_signature(fn)
    name = getattr(fn, "__name__", "")
    if not NAME.match(name):
        raise ConfigError(f"{_where(fn)}: name {name!r} is refused by the model APIs; use "
                          "letters, digits, _ and - (at most 64)")
    try:
        wrapped = beta_tool(fn)
        schema = wrapped.input_schema
    except Exception as exc:  # pydantic cannot build a schema for a hint
        raise ConfigError(f"{_where(fn)}: no JSON schema for its parameters ({exc}); use "
                          "JSON types (str, int, float, bool, list, dict)") from None
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise ConfigError(f"{_where(fn)}: its parameters do not make a JSON object schema")
    description = " ".join((wrapped.description or "").split())
    if not description:
        raise ConfigError(f"{_where(fn)}: no docstring; say in one line what it does (the "
                          "model reads it to decide when to call it)")
    spec = ToolSpec(name=name, description=description, schema=canonical(schema))
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        source = ""
    fingerprint = xxhash.xxh3_64_hexdigest(f"{spec.schema}\n{description}\n{source}".encode())
    return DeclaredTool(spec=spec, call=wrapped.call, pure=bool(getattr(fn, PURE_MARK, False)),
                        fingerprint=fingerprint)


def check_names(tools: Sequence[DeclaredTool], where: str) -> tuple[DeclaredTool, ...]:
    seen: set[str] = set()
    for t in tools:
        if t.name in seen:
            raise ConfigError(f"{where}: two tools are named {t.name!r}; rename one")
        seen.add(t.name)
    return tuple(tools)
