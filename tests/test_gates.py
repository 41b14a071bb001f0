"""Gates shared by several clients, each on its own thread and event loop: one connection limit
for all of them, one cost cap that refuses a call before the paid cost would pass it."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from llm_cache.backends.base import BackendBase
from llm_cache.client import CachedLLM
from llm_cache.gates import ByRole, CostCap, GateChain, SharedLimit, StopRequested, estimate_cost
from llm_cache.prices import default_prices
from llm_cache.records import Message, Request, Response, Role, Usage
from llm_cache.retry import RetryDecision


class SlowBackend(BackendBase):
    """Awaits a little per call and records how many calls of all clients overlap."""

    name = "slow"
    concurrency = None
    lock = threading.Lock()
    now = 0
    peak = 0

    def __init__(self, output_tokens: int = 50) -> None:
        self.output_tokens = output_tokens

    async def acomplete(self, request: Request) -> Response:
        with SlowBackend.lock:
            SlowBackend.now += 1
            SlowBackend.peak = max(SlowBackend.peak, SlowBackend.now)
        await asyncio.sleep(0.01)
        with SlowBackend.lock:
            SlowBackend.now -= 1
        return Response(text=f"ok {request.user_text()}",
                        usage=Usage(input_tokens=100, output_tokens=self.output_tokens))

    def classify(self, exc: BaseException) -> RetryDecision:
        return RetryDecision.no(str(exc))

    async def aclose(self) -> None:
        return None


def _requests(client: int, n: int, model: str = "claude-haiku-4-5") -> list[Request]:
    return [Request(role=Role.TARGET, model=model, system="skill", max_tokens=200,
                    messages=(Message.user(f"client {client} sample {i}"),)) for i in range(n)]


def test_one_limit_is_shared_by_clients_on_different_threads(tmp_path):
    SlowBackend.now = SlowBackend.peak = 0
    limit = SharedLimit(3, "anthropic")

    def one(client: int) -> int:
        with CachedLLM.open(tmp_path / f"c{client}", backends={Role.TARGET: SlowBackend()},
                            concurrency=8, gate=ByRole({Role.TARGET: limit})) as llm:
            return len(llm.complete(_requests(client, 12)))

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(one, range(4))) == [12] * 4
    assert SlowBackend.peak <= 3 and limit.peak == 3  # reached, never passed
    assert limit.calls == 48 and limit.in_flight == 0


def test_cache_hits_never_touch_the_gate(tmp_path):
    limit = SharedLimit(1)
    with CachedLLM.open(tmp_path, backends={Role.TARGET: SlowBackend()}, gate=limit) as llm:
        llm.complete(_requests(0, 3))
        llm.complete(_requests(0, 3))
    assert limit.calls == 3


def test_the_cost_cap_stops_before_the_paid_cost_would_pass_it(tmp_path):
    prices = default_prices()
    cap = 0.02
    gate = CostCap(cap, prices=prices)
    with CachedLLM.open(tmp_path, backends={Role.TARGET: SlowBackend(output_tokens=150)},
                        concurrency=4, gate=gate) as llm:
        with pytest.raises(StopRequested) as stopped:
            for batch in range(100):
                llm.complete(_requests(batch, 4))
        paid = llm.accounting().total().cost_usd
    assert paid <= cap and gate.paid == pytest.approx(paid)
    one_call = estimate_cost(_requests(0, 1)[0], prices)
    assert cap - paid < 2 * one_call  # it went as far as a worst-case call allowed
    assert gate.exhausted and "--max-cost cap $0.02" in str(stopped.value)
    assert "higher --max-cost" in stopped.value.hint


def test_the_cost_cap_counts_what_earlier_sittings_paid():
    gate = CostCap(1.0, already_usd=0.999)
    request = _requests(0, 1)[0]
    with pytest.raises(StopRequested):
        asyncio.run(gate.enter(request))


def test_the_estimate_bounds_the_real_cost_from_above():
    prices = default_prices()
    request = Request(role=Role.TARGET, model="claude-sonnet-4-6", system="x" * 3000,
                      max_tokens=500, messages=(Message.user("y" * 1200),))
    real = prices.cost("claude-sonnet-4-6", Usage(input_tokens=4200 // 4, output_tokens=500))
    assert estimate_cost(request, prices) >= real
    free = Request(role=Role.TARGET, model="gguf:model@reset", system="", max_tokens=9,
                   messages=(Message.user("z"),))
    assert estimate_cost(free, prices) == 0.0


def test_a_chain_leaves_the_gates_it_entered_when_a_later_one_refuses():
    limit = SharedLimit(2)
    refusing = CostCap(0.0)
    chain = GateChain([limit, refusing])
    with pytest.raises(StopRequested):
        asyncio.run(chain.enter(_requests(0, 1)[0]))
    assert limit.in_flight == 0


def _queue_behind(limit: SharedLimit, widths: list[int], order: list[int]) -> list[asyncio.Task]:
    """One waiting task per width (in this order), each noting its index once admitted."""

    async def wait(i: int, width: int) -> None:
        await limit.enter(None, width)
        order.append(i)
        await limit.leave(None, None)

    return [asyncio.ensure_future(wait(i, w)) for i, w in enumerate(widths)]


def test_a_freed_slot_goes_to_the_narrowest_waiting_wave_then_the_earliest():
    async def main() -> list[int]:
        limit, order = SharedLimit(1), []
        await limit.enter(None, 1)
        tasks = _queue_behind(limit, [5, 1, 3, 1, 5], order)
        await asyncio.sleep(0)  # all five queued behind the held slot
        await limit.leave(None, None)
        await asyncio.gather(*tasks)
        assert limit.in_flight == 0 and limit.calls == 6 and limit.peak == 1
        return order

    assert asyncio.run(main()) == [1, 3, 2, 0, 4]


@pytest.mark.parametrize("granted_first", [False, True])
def test_a_wait_cancelled_as_its_slot_is_handed_over_passes_the_slot_on(granted_first):
    """Cancelled before the hand-over reached it, or after (the slot is then already its)."""

    async def main() -> None:
        limit, order = SharedLimit(1), []
        await limit.enter(None, 1)
        first, second = _queue_behind(limit, [1, 2], order)
        await asyncio.sleep(0)
        await limit.leave(None, None)  # hands the slot to `first`
        if granted_first:
            await asyncio.sleep(0)  # the hand-over has run; `first` has not resumed yet
        first.cancel()
        await asyncio.gather(first, second, return_exceptions=True)
        assert first.cancelled() and order == [1]
        assert limit.in_flight == 0

    asyncio.run(main())


class _CountingLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        super().__init__()
        self.woken = 0

    def call_soon_threadsafe(self, callback, *args, context=None):  # noqa: ANN001, ANN201
        self.woken += 1
        return super().call_soon_threadsafe(callback, *args, context=context)


def test_a_call_that_ends_wakes_one_waiter_not_all_of_them():
    """Forty waiters on another thread's loop: one leave wakes that loop once, for one waiter."""
    limit = SharedLimit(1)
    loop = _CountingLoop()
    queued, admitted, order = threading.Event(), threading.Event(), []
    holders: list[asyncio.Task] = []

    async def hold(i: int) -> None:
        await limit.enter(None, 1)
        order.append(i)
        admitted.set()
        await asyncio.sleep(60)  # keeps the slot: nothing else may be admitted

    async def waiters() -> None:
        holders.extend(asyncio.ensure_future(hold(i)) for i in range(40))
        await asyncio.sleep(0)
        queued.set()
        await asyncio.gather(*holders, return_exceptions=True)

    asyncio.run(limit.enter(None, 1))  # the slot is held by a call on this thread
    thread = threading.Thread(target=loop.run_until_complete, args=(waiters(),))
    thread.start()
    assert queued.wait(5)
    asyncio.run(limit.leave(None, None))
    assert admitted.wait(5)
    woken, admitted_now = loop.woken, list(order)
    for task in holders:
        loop.call_soon_threadsafe(task.cancel)
    thread.join(5)
    loop.close()
    assert woken == 1 and admitted_now == [0]
    assert limit.in_flight == 1  # the admitted waiter was cancelled holding it, never left
