"""Usage and cost by call kind and model; hits show what they would have cost."""

from __future__ import annotations

import pytest

from llm_cache.accounting import Ledger
from llm_cache.backends.function import FunctionBackend
from llm_cache.client import CachedLLM
from llm_cache.prices import PriceTable, default_prices
from llm_cache.records import CallKind, Message, Request, Response, Role, Usage

HAIKU = "claude-haiku-4-5-20251001"
USAGE = Usage(input_tokens=1_000_000, output_tokens=100_000, cache_write_tokens=200_000,
              cache_read_tokens=2_000_000)


def req(q: str, kind: CallKind = CallKind.TARGET_EXECUTION, model: str = HAIKU) -> Request:
    return Request(role=Role.TARGET, model=model, system="s", messages=(Message.user(q),),
                   max_tokens=8, kind=kind)


def test_haiku_cost_uses_every_token_class():
    # 1M in x $1 + 0.1M out x $5 + 0.2M write x $1.25 + 2M read x $0.10
    assert default_prices().cost(HAIKU, USAGE) == pytest.approx(1.0 + 0.5 + 0.25 + 0.2)


def test_aliases_and_local_models_and_unknown_models():
    prices = default_prices()
    assert prices.price("claude-haiku-4-5") == prices.price(HAIKU)
    assert prices.cost("gguf:smollm2@reset", USAGE) == 0.0
    assert prices.cost("some-vllm-model", USAGE) is None
    assert prices.cache_min_tokens(HAIKU) == 4096
    assert prices.cache_min_tokens("claude-sonnet-4-6") == 1024
    assert prices.cache_min_tokens("unknown") == 1024


def test_every_price_row_has_an_as_of_date():
    assert all(p.as_of for p in default_prices().models.values())


def test_ledger_splits_paid_calls_from_hits_by_kind_and_model():
    ledger = Ledger()
    r = Response(text="x", usage=USAGE)
    ledger.paid(req("a"), r, retries=2)
    ledger.hit(req("a"), r)
    ledger.paid(req("b", CallKind.CANDIDATE_GENERATION), r, retries=0)
    ledger.paid(req("c", model="local-thing"), r, retries=0)
    acc = ledger.snapshot()
    target = acc.by_kind()[CallKind.TARGET_EXECUTION]
    assert (target.calls, target.paid_calls, target.cache_hits, target.retries) == (3, 2, 1, 2)
    assert target.cost_usd == pytest.approx(1.95)
    assert target.would_have_cost_usd == pytest.approx(1.95)
    assert target.priced is False  # the unpriced local-thing is inside this kind
    assert acc.by_model()[HAIKU].priced is True
    assert acc.by_model()[HAIKU].cost_usd == pytest.approx(3.9)
    total = acc.total()
    assert total.usage == USAGE + USAGE + USAGE and total.cached_usage == USAGE
    assert set(acc.by_kind()) == {CallKind.TARGET_EXECUTION, CallKind.CANDIDATE_GENERATION}
    assert acc.to_dict()["total"]["calls"] == 4


def test_custom_price_table():
    table = PriceTable.from_json({"models": {"m": {"input": 2, "cache_write": 0, "cache_read": 0,
                                                   "output": 0, "as_of": "today"}}})
    ledger = Ledger(table)
    ledger.paid(req("a", model="m"), Response(text="", usage=Usage(input_tokens=500_000)), 0)
    assert ledger.snapshot().total().cost_usd == pytest.approx(1.0)


def test_client_accounting_replay_costs_nothing_but_shows_would_have_cost(tmp_path):
    def fn(r: Request) -> Response:
        return Response(text="ok", usage=Usage(input_tokens=1000, output_tokens=100))

    kinds = [CallKind.TARGET_EXECUTION, CallKind.STRATEGY_SELECTION,
             CallKind.FEEDBACK_PREPARATION]
    requests = [req(f"q{i}", kinds[i % 3]) for i in range(6)]
    with CachedLLM.open(tmp_path / "c", backends={Role.TARGET: FunctionBackend(fn)}) as llm:
        llm.complete(requests)
        live = llm.accounting()
    with CachedLLM.open(tmp_path / "c", backends={}, mode="replay") as llm:
        llm.complete(requests)
        replay = llm.accounting()
    assert live.total().cost_usd == pytest.approx(6 * (1000 * 1 + 100 * 5) / 1e6)
    assert replay.total().cost_usd == 0.0 and replay.total().paid_calls == 0
    assert replay.total().would_have_cost_usd == pytest.approx(live.total().cost_usd)
    assert {k: v.cache_hits for k, v in replay.by_kind().items()} == {k: 2 for k in kinds}
