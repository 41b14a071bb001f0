"""Gates shared by several clients, each on its own thread and event loop: one connection limit
for all of them, one cost cap that refuses a call before the paid cost would pass it."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from llm_cache.client import CachedLLM
from llm_cache.gates import ByRole, CostCap, GateChain, SharedLimit, StopRequested, estimate_cost
from llm_cache.prices import default_prices
from llm_cache.records import Message, Request, Response, Role, Usage
from llm_cache.retry import RetryDecision


class SlowBackend:
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
