"""Gates: what a paid call must pass before it reaches a backend, shared by many clients.

`CachedLLM(gate=...)` enters its gate before each call that reaches a backend (cache hits never
touch it) and leaves it when the call is over. One gate object can serve many clients, each on
its own event loop and thread: that is how the cells of a grid share one connection limit per
model endpoint (`SharedLimit`) and one cost cap (`CostCap`). A gate may refuse a call by
raising `StopRequested`; the run then stops as after Ctrl-C: events so far kept, paid calls
cached, resumable with the same command.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from llm_cache.prices import PriceTable, default_prices
from llm_cache.records import ImageBlock, Request, Response, Role, TextBlock

# The same lower bound the Anthropic backend uses to decide on prompt caching: fewer characters
# per token than real text has, so an estimate of input tokens from characters is an upper one.
CHARS_PER_TOKEN = 3
IMAGE_TOKENS = 1_600  # a page image resized to the API's limit costs at most about this many


class StopRequested(Exception):  # noqa: N818  (a request to stop, not an error of the caller)
    """A control refused the next call or round: `reason` says why, `hint` how to continue."""

    def __init__(self, reason: str, hint: str) -> None:
        super().__init__(f"{reason}; {hint}")
        self.reason = reason
        self.hint = hint


class CallGate(Protocol):
    async def enter(self, request: Request, width: int) -> Any:
        """Wait until the call may go out; return a ticket for `leave`, or raise StopRequested.
        `width`: how many calls reach a backend together with this one (its wave)."""
        ...

    async def leave(self, ticket: Any, response: Response | None) -> None:
        """The call is over (`response` is None when it failed)."""
        ...


class _Waiters:
    """Coroutines on any thread's event loop waiting for shared state to change."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._waiting: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    async def until(self, ready: Callable[[], bool]) -> None:
        """Return once `ready()` (called under the lock, may claim what it found) is true."""
        loop = asyncio.get_running_loop()
        while True:
            with self.lock:
                if ready():
                    return
                future: asyncio.Future[None] = loop.create_future()
                self._waiting.append((loop, future))
            try:
                await future
            finally:
                with self.lock:
                    if (loop, future) in self._waiting:
                        self._waiting.remove((loop, future))

    def wake_all(self) -> None:
        with self.lock:
            waiting, self._waiting = self._waiting, []
        for loop, future in waiting:
            loop.call_soon_threadsafe(_resolve, future)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class SharedLimit:
    """At most `limit` calls in flight across every client holding this gate.

    A call that finds every slot taken queues; a call that ends hands its slot to the queued
    call of the narrowest wave, the earliest of equals. One ending wakes one waiter: waking all
    of them to race for the slot cost more CPU than the calls themselves once hundreds waited
    across a grid's event loops. Narrow waves first because a run waits for the slowest call of
    each wave: one call alone (a generation, a selection) holds its whole run, one call of forty
    holds a fortieth of a wave that takes several turns of the limit anyway. A wide wave waits
    only while narrower ones are queued, so it is never passed over for good."""

    def __init__(self, limit: int, name: str = "") -> None:
        if limit < 1:
            raise ValueError(f"connection limit {name or ''} must be >= 1, got {limit}")
        self.limit = limit
        self.name = name
        self.in_flight = 0
        self.peak = 0
        self.calls = 0
        self._lock = threading.Lock()
        self._order = itertools.count()
        self._queue: list[_Queued] = []  # a heap: narrowest wave, then arrival

    async def enter(self, request: Request | None, width: int = 1) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self.in_flight < self.limit and not self._queue:
                self.in_flight += 1
                self.calls += 1
                self.peak = max(self.peak, self.in_flight)
                return
            waiter = (width, next(self._order), loop, loop.create_future())
            heapq.heappush(self._queue, waiter)
        try:
            await waiter[3]
        except BaseException:
            with self._lock:
                granted = waiter not in self._queue
                if not granted:
                    self._queue.remove(waiter)
                    heapq.heapify(self._queue)
            if granted:  # the slot was handed over as the wait was cancelled: pass it on
                self._release()
            raise

    async def leave(self, ticket: Any, response: Response | None) -> None:
        self._release()

    def _release(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    self.in_flight -= 1
                    return
                _, _, loop, future = heapq.heappop(self._queue)
                self.calls += 1  # the slot stays in flight, now held by the waiter
            try:
                loop.call_soon_threadsafe(_resolve, future)
                return
            except RuntimeError:  # its loop is closed: nobody is left to take the slot
                continue


_Queued = tuple[int, int, asyncio.AbstractEventLoop, "asyncio.Future[None]"]


def estimate_cost(request: Request, prices: PriceTable) -> float:
    """An upper estimate of one call's cost: input at 3 characters per token, every image at
    its maximum size, no prompt-cache discount, and the whole `max_tokens` as output."""
    price = prices.price(request.model)
    if price is None:
        return 0.0
    chars = len(request.system)
    images = 0
    for message in request.messages:
        for block in message.content:
            if isinstance(block, TextBlock):
                chars += len(block.text)
            elif isinstance(block, ImageBlock):
                images += 1
    tokens_in = chars // CHARS_PER_TOKEN + images * IMAGE_TOKENS + 16 * len(request.messages)
    return (tokens_in * max(price.input, price.cache_write) + request.max_tokens * price.output) \
        / 1_000_000


class CostCap:
    """Refuse a call when its worst-case cost, added to what was paid and what the calls in
    flight may still cost, would pass `cap_usd`. While calls are in flight a refused call waits
    for them (their real cost is usually far below the worst case); once nothing is in flight
    and it still does not fit, it raises StopRequested. Models without a price cost 0 here."""

    def __init__(self, cap_usd: float, *, already_usd: float = 0.0, flag: str = "--max-cost",
                 prices: PriceTable | None = None, hint: str = "") -> None:
        self.cap = cap_usd
        self.paid = already_usd
        self.reserved = 0.0
        self.in_flight = 0  # counted, not inferred from `reserved` (float sums leave residue)
        self.exhausted = False  # set once a call was refused for good
        self.flag = flag
        self.prices = prices or default_prices()
        self.hint = hint or (f"rerun the same command with a higher {flag} to continue "
                             "(paid calls are answered from the cache)")
        self._waiters = _Waiters()

    def _fits(self, estimate: float) -> bool:
        if self.paid + self.reserved + estimate <= self.cap:
            self.reserved += estimate
            self.in_flight += 1
            return True
        if self.in_flight == 0:
            self.exhausted = True
            raise StopRequested(
                f"the paid cost ${self.paid:.4f} would pass the {self.flag} cap ${self.cap:.2f} "
                f"with the next call (up to ${estimate:.4f})", self.hint)
        return False

    async def acquire(self, estimate: float) -> float:
        await self._waiters.until(lambda: self._fits(estimate))
        return estimate

    async def release(self, estimate: float, cost: float) -> None:
        with self._waiters.lock:
            self.in_flight -= 1
            self.reserved = self.reserved - estimate if self.in_flight else 0.0
            self.paid += cost
        self._waiters.wake_all()

    async def enter(self, request: Request, width: int = 1) -> tuple[float, str]:
        return await self.acquire(estimate_cost(request, self.prices)), request.model

    async def leave(self, ticket: Any, response: Response | None) -> None:
        estimate, model = ticket
        cost = 0.0 if response is None else (self.prices.cost(model, response.usage) or 0.0)
        await self.release(estimate, cost)


class GateChain:
    """Several gates in order (a stop check, then a cost cap, then a connection limit); left in
    reverse order, and a gate entered before one that refuses is left again."""

    def __init__(self, gates: Sequence[CallGate]) -> None:
        self.gates = tuple(gates)

    async def enter(self, request: Request, width: int = 1) -> Any:
        tickets: list[tuple[CallGate, Any]] = []
        try:
            for gate in self.gates:
                tickets.append((gate, await gate.enter(request, width)))
        except BaseException:
            for gate, ticket in reversed(tickets):
                await gate.leave(ticket, None)
            raise
        return tickets

    async def leave(self, ticket: Any, response: Response | None) -> None:
        for gate, inner in reversed(ticket):
            await gate.leave(inner, response)


class ByRole:
    """One gate per role (the target and the optimizer usually sit behind different endpoints)."""

    def __init__(self, gates: Mapping[Role, CallGate]) -> None:
        self.gates = dict(gates)

    async def enter(self, request: Request, width: int = 1) -> Any:
        gate = self.gates.get(request.role)
        return None if gate is None else (gate, await gate.enter(request, width))

    async def leave(self, ticket: Any, response: Response | None) -> None:
        if ticket is not None:
            gate, inner = ticket
            await gate.leave(inner, response)
