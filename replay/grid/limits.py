"""What all cells of a grid share: one connection limit per model endpoint, one cost cap, one
stop control, one MLflow client. Built once by the driver; each cell gets a gate made of them.

A limit named `anthropic` applies to every cell's calls to the Anthropic API, `bedrock` to
Bedrock, `openai` to every OpenAI-compatible server together, `openai:http://gpu:8000/v1` to
that one server, `llamacpp` to local models. Endpoints without a limit are limited only by
each cell's own `concurrency`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from llm_cache.errors import SpecError
from llm_cache.gates import ByRole, CallGate, CostCap, GateChain, SharedLimit
from llm_cache.providers import PROVIDERS
from llm_cache.records import Role
from replay.grid.cells import Cell
from replay.run.options import RunOptions
from replay.stops.control import StopControl, cache_cost
from stratune_core.records.errors import ConfigError


def endpoint_of(options: RunOptions, role: Role) -> str:
    """The endpoint a cell's calls of `role` go to, read from its resolved model spec."""
    target = role is Role.TARGET
    try:
        parsed = (options.target_model if target else options.optimizer_model).parsed
    except SpecError:  # a kind of the embedding program, unknown in this (Ray worker) process
        parsed = None
    if parsed is None:  # a program's or a target kind's own model: its prefix names it
        return (options.target if target else options.optimizer).partition(":")[0]
    return PROVIDERS[parsed.provider].endpoint(parsed)


def limit_name(endpoint: str, names: Iterable[str]) -> str | None:
    """The most specific limit that covers an endpoint (`openai:URL` before `openai`)."""
    covering = [n for n in names if endpoint == n or endpoint.startswith(n + ":")]
    return max(covering, key=len, default=None)


def parse_connections(items: Iterable[str]) -> dict[str, int]:
    """`--max-connections anthropic=64` (repeatable)."""
    out: dict[str, int] = {}
    for item in items:
        name, sep, value = item.rpartition("=")
        try:
            number = int(value)
        except ValueError:
            number = 0
        if not sep or not name or number < 1:
            raise ConfigError(f"--max-connections {item!r}: write ENDPOINT=N, e.g. anthropic=64")
        out[name] = number
    return out


class GridLimits:
    """The local (one-process) form: gates shared by threads."""

    def __init__(self, connections: Mapping[str, int], stop: StopControl,
                 cost: CostCap | None = None) -> None:
        self.limits = {name: SharedLimit(n, name) for name, n in connections.items()}
        self.stop = stop
        self.cost = cost

    def _limit(self, options: RunOptions, role: Role) -> CallGate | None:
        name = limit_name(endpoint_of(options, role), self.limits)
        return None if name is None else self.limits[name]

    def gate(self, cell: Cell) -> CallGate:
        gates: list[CallGate] = [self.stop]
        if self.cost is not None:
            gates.append(self.cost)
        by_role = {role: gate for role, gate in (
            (Role.TARGET, self._limit(cell.options, Role.TARGET)),
            (Role.OPTIMIZER, self._limit(cell.options, Role.OPTIMIZER))) if gate is not None}
        if by_role:
            gates.append(ByRole(by_role))
        return GateChain(gates)


def grid_cost_cap(max_cost: float | None, cells: Iterable[Cell], root: Path) -> CostCap | None:
    """The cap counts what every cell has paid so far (over all earlier sittings)."""
    if max_cost is None:
        return None
    already = cache_cost(cell.path(root) / "cache" for cell in cells)
    return CostCap(max_cost, already_usd=already,
                   hint="rerun the grid with a higher --max-cost to continue (paid calls are "
                        "answered from the cells' caches)")

