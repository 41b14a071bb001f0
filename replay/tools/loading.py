"""`--tools`: which tools a task declares, spelled `module:attr` (a list of functions, imported
as a `module:function` scorer is) or `python` / `bash` (the sandboxed code tools), several
separated by commas; the Python API takes the functions themselves. Each is refused in one line,
exit 2, before anything is paid: a module that does not import, an attribute that is missing
or not a list of callables, a duplicate name, a tool `declare` refuses."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from replay.tools.declared import DeclaredTool, check_names, declare
from stratune_core.records.errors import ConfigError

SANDBOXED = ("python", "bash")


def split_spec(text: str) -> tuple[str, ...]:
    parts = tuple(p.strip() for p in text.split(",") if p.strip())
    if not parts:
        raise ConfigError(f"--tools {text!r}: name at least one tool: module:attr (a list of "
                          "functions), python or bash")
    return parts


def _imported(spec: str) -> Any:
    module_name, colon, attr = spec.partition(":")
    if not colon or not module_name or not attr:
        raise ConfigError(f"--tools {spec!r}: write module:attr (a list of functions), python "
                          "or bash")
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # a tools module beside the user's files
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # any failure of the user's module is theirs to fix
        raise ConfigError(f"--tools {spec}: module {module_name!r} does not import "
                          f"({type(exc).__name__}: {exc})") from None
    if not hasattr(module, attr):
        raise ConfigError(f"--tools {spec}: module {module_name!r} has no {attr!r}")
    return getattr(module, attr)


def functions_of(value: Any, where: str) -> tuple[Callable[..., Any], ...]:
    items = value if isinstance(value, list | tuple) else [value]
    if not items or not all(callable(f) and not isinstance(f, type) for f in items):
        raise ConfigError(f"{where}: not a list of functions; give a list of callables")
    return tuple(items)


def declared_tools(specs: Sequence[str], *, sandboxed: Callable[[str], DeclaredTool],
                   functions: Sequence[Callable[..., Any]] = ()) -> tuple[DeclaredTool, ...]:
    """Every tool `specs` names (`sandboxed(name)` builds a code tool) and `functions` (the
    Python API's), in order, their names checked."""
    tools: list[DeclaredTool] = []
    for spec in specs:
        if spec in SANDBOXED:
            tools.append(sandboxed(spec))
            continue
        tools.extend(declare(f) for f in functions_of(_imported(spec), f"--tools {spec}"))
    tools.extend(declare(f) for f in functions)
    return check_names(tools, "--tools")
