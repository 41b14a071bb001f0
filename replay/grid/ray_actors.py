"""What the cells of a Ray grid share, as Ray actors, and the gates that talk to them.

- `LimitActor`: one per model endpoint; a connection slot is held per call. Slots are counted
  per cell, so a cell retried after its node died first frees what the lost attempt held.
- `CostActor`: the grid's cost cap (llm_cache.gates.CostCap inside one actor).
- `BoardActor`: the cells' progress for the driver's live table, and the driver's stop flag
  (a STOP file or Ctrl-C) for cells on nodes that cannot see the grid directory.

The classes are plain; `ray.remote(...)` wraps them when a Ray grid starts, so importing this
module does not need Ray.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from llm_cache.gates import CostCap, SharedLimit, StopRequested, estimate_cost
from llm_cache.prices import default_prices
from llm_cache.records import Request, Response
from replay.grid.execute import CellStatus


class LimitActor:
    def __init__(self, limit: int, name: str) -> None:
        self.limit = SharedLimit(limit, name)
        self.held: Counter[str] = Counter()

    async def acquire(self, holder: str, width: int = 1) -> None:
        await self.limit.enter(None, width)
        self.held[holder] += 1

    async def release(self, holder: str) -> None:
        if self.held[holder] > 0:
            self.held[holder] -= 1
            await self.limit.leave(None, None)

    async def release_holder(self, holder: str) -> int:
        freed = self.held.pop(holder, 0)
        for _ in range(freed):
            await self.limit.leave(None, None)
        return freed

    def stats(self) -> dict[str, int]:
        return {"limit": self.limit.limit, "peak": self.limit.peak, "calls": self.limit.calls,
                "in_flight": self.limit.in_flight}


class CostActor:
    def __init__(self, cap: float, already: float, hint: str) -> None:
        self.cap = CostCap(cap, already_usd=already, hint=hint)

    async def acquire(self, estimate: float) -> tuple[str, str] | None:
        """None when the call may go out, else (reason, hint) of the refusal."""
        try:
            await self.cap.acquire(estimate)
        except StopRequested as stop:
            return stop.reason, stop.hint
        return None

    async def release(self, estimate: float, cost: float) -> None:
        await self.cap.release(estimate, cost)

    def exhausted(self) -> bool:
        return self.cap.exhausted


class BoardActor:
    def __init__(self) -> None:
        self.statuses: dict[str, CellStatus] = {}
        self.stop: str | None = None

    def report(self, status: CellStatus) -> None:
        self.statuses[status.id] = status

    def snapshot(self) -> list[CellStatus]:
        return list(self.statuses.values())

    def set_stop(self, reason: str) -> None:
        self.stop = reason

    def stop_reason(self) -> str | None:
        return self.stop


class RemoteLimit:
    """A cell's gate in front of one endpoint's `LimitActor`."""

    def __init__(self, actor: Any, holder: str) -> None:
        self.actor = actor
        self.holder = holder

    async def enter(self, request: Request, width: int = 1) -> None:
        await self.actor.acquire.remote(self.holder, width)

    async def leave(self, ticket: Any, response: Response | None) -> None:
        await self.actor.release.remote(self.holder)


class RemoteCost:
    """A cell's gate in front of the grid's `CostActor` (estimates are made locally)."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor
        self.prices = default_prices()

    async def enter(self, request: Request, width: int = 1) -> tuple[float, str]:
        estimate = estimate_cost(request, self.prices)
        refused = await self.actor.acquire.remote(estimate)
        if refused is not None:
            raise StopRequested(*refused)
        return estimate, request.model

    async def leave(self, ticket: Any, response: Response | None) -> None:
        estimate, model = ticket
        cost = 0.0 if response is None else (self.prices.cost(model, response.usage) or 0.0)
        await self.actor.release.remote(estimate, cost)


class RemoteBoard:
    """A cell's reporter: progress goes to the `BoardActor` without waiting for it."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    def report(self, status: CellStatus) -> None:
        self.actor.report.remote(status)
