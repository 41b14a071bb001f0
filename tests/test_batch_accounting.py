"""The Batch API part of the paid calls: priced at the table's multiplier, apart in usage.json,
a row of its own in the viewer's cost table, and both prices in `stratune plan`."""

from __future__ import annotations

import pytest
from rich.console import Console

from llm_cache.accounting import Ledger
from llm_cache.prices import default_prices
from llm_cache.records import CallKind, Message, Request, Response, Role, Usage
from replay.viewer.costs import cost_table

HAIKU = "claude-haiku-4-5-20251001"


def request(kind: CallKind = CallKind.TARGET_EXECUTION) -> Request:
    return Request(role=Role.TARGET, model=HAIKU, system="s", messages=(Message.user("q"),),
                   max_tokens=8, kind=kind)


def answer(tokens: int) -> Response:
    return Response(text="a", usage=Usage(input_tokens=tokens, output_tokens=tokens,
                                          cache_write_tokens=tokens, cache_read_tokens=tokens))


def test_batch_calls_cost_half_and_are_kept_apart():
    ledger = Ledger()
    ledger.paid(request(), answer(1000), 0)
    ledger.paid(request(), answer(3000), 1, batch=True)
    ledger.paid(request(), answer(2000), 0, batch=True)
    row = ledger.snapshot().total()
    price = default_prices().price(HAIKU)
    assert row.paid_calls == 3 and row.batch_calls == 2 and row.retries == 1
    assert row.batch_usage == answer(5000).usage and row.usage == answer(6000).usage
    assert row.batch_cost_usd == pytest.approx(0.5 * price.cost(answer(5000).usage))
    assert row.cost_usd == pytest.approx(price.cost(answer(1000).usage) + row.batch_cost_usd)
    data = ledger.snapshot().to_dict()["total"]
    assert data["live_calls"] == 1 and data["batch_calls"] == 2
    assert data["live_cost_usd"] == pytest.approx(price.cost(answer(1000).usage))
    assert data["batch_usage"]["input_tokens"] == 5000


def test_an_all_live_run_has_zero_batch_fields_and_no_viewer_row():
    ledger = Ledger()
    ledger.paid(request(), answer(10), 0)
    usage = ledger.snapshot().to_dict()
    assert usage["total"]["batch_calls"] == 0 and usage["total"]["batch_cost_usd"] == 0.0
    console = Console(width=100, record=True)
    console.print(cost_table(usage))
    assert "Batch API" not in console.export_text()


def test_the_viewer_shows_the_batch_part_under_the_total():
    ledger = Ledger()
    ledger.paid(request(), answer(100), 0)
    ledger.paid(request(), answer(200), 0, batch=True)
    console = Console(width=80, record=True)
    console.print(cost_table(ledger.snapshot().to_dict()))
    text = console.export_text()
    (line,) = [x for x in text.splitlines() if "Batch API" in x]
    batch_cost = ledger.snapshot().total().batch_cost_usd
    assert f"{batch_cost:.4f}" in line and " 600 " in line  # input, cache write and read


def test_plan_prices_the_run_live_and_with_the_target_on_the_batch_api():
    from replay.plan.estimate import make_plan, render_plan
    from stratune_core.config.knobs import Config
    from tests.support.toy import ToyTask

    config = Config(target_model=HAIKU, optimizer_model="claude-sonnet-4-6")
    plan = make_plan(config, ToyTask(n_train=48))
    console = Console(width=200, record=True)
    console.print(render_plan(plan, config))
    text = console.export_text()
    live = plan.target_cost + plan.optimizer_cost
    batch = plan.target_cost * default_prices().batch_multiplier + plan.optimizer_cost
    assert f"~${live:.2f} all live; ~${batch:.2f} with the target's waves" in text
