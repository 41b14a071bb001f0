"""A task's tools as a run uses them: loaded once per process from the task spec's spellings
(`TaskSpec.tools`) and the Python API's functions, turned into the core's `Toolbox` (what the
requests hold: specs, fingerprints, the turn limit, recorded in the manifest) and the backend
that answers the calls.

A replay needs neither the tools nor the sandbox: it rebuilds the episodes from the recorded
toolbox and the cache. It recomputes the calls of each pure tool it can still import with the
recorded fingerprint, and says which it cannot.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from attrs import frozen

from replay.tools.backend import ToolBackend
from replay.tools.declared import DeclaredTool
from replay.tools.loading import SANDBOXED, declared_tools
from stratune_core.records.errors import ConfigError, StraTuneError
from stratune_core.tasks.agent import DEFAULT_MAX_TURNS, MAX_TURNS, Toolbox

# The Python API's functions by their spelling in the manifest (`module:qualname`): an
# in-process program's tools need not be importable by name.
_REGISTERED: dict[str, Callable[..., Any]] = {}


def spelling(fn: Callable[..., Any]) -> str:
    return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"


def register(functions: Sequence[Callable[..., Any]]) -> tuple[str, ...]:
    """The spellings of the Python API's `tools=[...]`, each resolvable in this process."""
    names = []
    for fn in functions:
        if not callable(fn):
            raise ConfigError(f"tools: {fn!r} is not a callable; give functions")
        _REGISTERED[spelling(fn)] = fn
        names.append(spelling(fn))
    return tuple(names)


def check_turns(max_turns: int | None) -> int:
    turns = DEFAULT_MAX_TURNS if max_turns is None else max_turns
    if not 1 <= turns <= MAX_TURNS:
        raise ConfigError(f"--max-turns {turns}: give 1 to {MAX_TURNS} model turns per episode")
    return turns


def _sandboxed(call_seconds: float) -> Callable[[str], DeclaredTool]:
    def build(name: str) -> DeclaredTool:
        from replay.tasks.sandbox import choose
        from replay.tools.code_tools import code_tool

        return code_tool(name, choose(), call_seconds)
    return build


@frozen(kw_only=True)
class Toolset:
    tools: tuple[DeclaredTool, ...]
    max_turns: int

    def toolbox(self) -> Toolbox:
        return Toolbox(tools=tuple(t.spec for t in self.tools),
                       fingerprints=tuple((t.name, t.fingerprint) for t in self.tools),
                       max_turns=self.max_turns)

    def backend(self, *, call_seconds: float, episode_seconds: float) -> ToolBackend:
        return ToolBackend(self.tools, call_seconds=call_seconds,
                           episode_seconds=episode_seconds)


def load_toolset(specs: Sequence[str], max_turns: int | None, *,
                 call_seconds: float) -> Toolset:
    """Every tool the spellings name, checked (one line for the first problem)."""
    registered = [_REGISTERED[s] for s in specs if s in _REGISTERED]
    named = [s for s in specs if s not in _REGISTERED]
    tools = declared_tools(named, sandboxed=_sandboxed(call_seconds), functions=registered)
    return Toolset(tools=tools, max_turns=check_turns(max_turns))


def rechecking(specs: Sequence[str], recorded: Toolbox) -> tuple[tuple[DeclaredTool, ...],
                                                                  tuple[str, ...]]:
    """For a replay: the pure tools that still import with their recorded fingerprints, and a
    note for each tool whose calls cannot be recomputed."""
    wanted = dict(recorded.fingerprints)
    found: list[DeclaredTool] = []
    notes: list[str] = []
    for spec in specs:
        if spec in SANDBOXED:
            continue  # impure by nature: its recorded results are the replay's
        try:
            tools = load_toolset([spec], recorded.max_turns, call_seconds=1.0).tools
        except StraTuneError as exc:
            notes.append(f"tools {spec}: not rechecked ({exc})")
            continue
        for tool in tools:
            if not tool.pure:
                continue
            if wanted.get(tool.name) != tool.fingerprint:
                notes.append(f"tool {tool.name}: changed since the recording; its calls are "
                             "replayed from the cache, not rechecked")
            else:
                found.append(tool)
    return tuple(found), tuple(notes)
