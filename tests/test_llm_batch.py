"""`batch=on`: the misses of one `complete` call as one Message Batch, through the real SDK
against the fake server's batch endpoints. Same keys, same answers, half the price; errored,
expired and canceled items; the journal that lets a restarted client collect its batch."""

from __future__ import annotations

import json
import logging

import anthropic
import pytest

from llm_cache.backends import backend_for
from llm_cache.backends.anthropic_errors import classify_batch_error
from llm_cache.batch_journal import BatchJournal
from llm_cache.client import CachedLLM
from llm_cache.errors import LLMFatalError, SpecError
from llm_cache.key import canonical_request, key_of_canonical
from llm_cache.prices import default_prices
from llm_cache.records import Message, Request, Role
from llm_cache.retry import RetryKind, RetryPolicy
from llm_cache.testing.fake_server import FakeAnthropicServer, Fault, ItemOutcome

HAIKU = "claude-haiku-4-5-20251001"
FAST = RetryPolicy(max_retries=2, base_delay=0.0, rate_limit_base_delay=0.0)
CREATE = "/v1/messages/batches"


def asks(n: int, system: str = "Be brief.", **fields) -> list[Request]:
    return [Request(role=Role.TARGET, model=HAIKU, system=system,
                    messages=(Message.user(f"q{i}"),), max_tokens=16, **fields) for i in range(n)]


def key(request: Request) -> str:
    return key_of_canonical(canonical_request(request))


def open_llm(tmp_path, fake, options: str = "&batch=on", sleep=None, name: str = "c"):
    spec = f"anthropic:claude-haiku-4-5?base_url={fake.url}&batch_poll=0.02{options}"
    if "batch=on" not in options:
        spec = f"anthropic:claude-haiku-4-5?base_url={fake.url}{options}"
    backend = backend_for(spec, api_key="k")
    llm = CachedLLM.open(tmp_path / name, backends={Role.TARGET: backend}, retry_policy=FAST)
    if sleep is not None:
        llm._sleep = sleep
    return llm


def paths(fake) -> list[str]:
    return [r.path for r in fake.requests]


def test_a_wave_is_one_batch_keyed_by_the_cache_keys_and_stored_like_live_answers(tmp_path):
    requests = asks(10)
    with FakeAnthropicServer(batch_delay=0.1) as fake, open_llm(tmp_path, fake) as llm:
        answers = llm.complete(requests)
        assert [a.text for a in answers] == [f"echo: q{i}" for i in range(10)]
        assert paths(fake).count(CREATE) == 1 and "/v1/messages" not in paths(fake)
        (batch,) = fake.batches.batches.values()
        assert [item["custom_id"] for item in batch.requests] == [key(r) for r in requests]
        entry = llm.store.get(key(requests[0]))
        assert entry.response == answers[0] and f"batch {batch.id}" in entry.backend
        seen = len(fake.requests)
        assert llm.complete(requests) == answers and len(fake.requests) == seen  # all hits
        total = llm.accounting().total()
    assert total.paid_calls == total.batch_calls == 10 and total.cache_hits == 10
    live_price = default_prices().price(HAIKU).cost(total.batch_usage)
    assert total.batch_cost_usd == pytest.approx(0.5 * live_price)
    assert total.cost_usd == pytest.approx(total.batch_cost_usd)
    lines = [json.loads(x) for x in (tmp_path / "c" / "batches.jsonl").read_text().splitlines()]
    assert [x["event"] for x in lines] == ["submitted", "collected"]
    assert lines[0]["keys"] == [key(r) for r in requests]


def test_the_cache_does_not_care_how_an_answer_was_obtained(tmp_path):
    requests = asks(9)
    with FakeAnthropicServer(batch_delay=0.05) as fake:
        with open_llm(tmp_path, fake, name="batch") as llm:
            batched = llm.complete(requests)
            batch_keys = set(llm.store.keys())
        with open_llm(tmp_path, fake, options="", name="live") as llm:
            live = llm.complete(requests)
            live_keys = set(llm.store.keys())
    assert batched == live and batch_keys == live_keys == {key(r) for r in requests}


def test_waves_below_batch_min_go_live_and_batch_min_is_configurable(tmp_path):
    with FakeAnthropicServer(batch_delay=0.05) as fake:
        with open_llm(tmp_path, fake, name="a") as llm:
            llm.complete(asks(7))
        assert CREATE not in paths(fake) and paths(fake).count("/v1/messages") == 7
        with open_llm(tmp_path, fake, options="&batch=on&batch_min=3", name="b") as llm:
            llm.complete(asks(3, system="Other."))
        assert paths(fake).count(CREATE) == 1


def test_cache_control_on_the_skill_applies_inside_batch_requests(tmp_path):
    skill = "Follow every rule. " * 1000  # > Haiku 4.5's 4,096-token minimum
    with FakeAnthropicServer(batch_delay=0.05) as fake, open_llm(tmp_path, fake) as llm:
        llm.complete(asks(8, system=skill, temperature=0.25))
        total = llm.accounting().total()
        (create,) = [r for r in fake.requests if r.path == CREATE]
    params = create.body["requests"][0]["params"]
    assert params["system"] == [{"type": "text", "text": skill,
                                 "cache_control": {"type": "ephemeral"}}]
    # What the SDK takes as extra_body is the body itself inside a batch item.
    assert params["temperature"] == 0.25 and "extra_body" not in params
    assert total.batch_usage.cache_write_tokens > 0 and total.batch_usage.cache_read_tokens > 0


def test_errored_items_follow_the_live_retry_rules(tmp_path):
    outcomes = [ItemOutcome.OVERLOADED, ItemOutcome.RATE_LIMITED]
    with FakeAnthropicServer(batch_delay=0.05, batch_outcomes=outcomes) as fake:
        with open_llm(tmp_path, fake, name="a") as llm:
            answers = llm.complete(asks(10))
            assert llm.retries == 2 and llm.accounting().total().retries == 2
        assert [a.text for a in answers] == [f"echo: q{i}" for i in range(10)]
        # The two items sent again are a wave below batch_min: they went live.
        assert paths(fake).count(CREATE) == 1 and paths(fake).count("/v1/messages") == 2
    with FakeAnthropicServer(batch_delay=0.05, batch_outcomes=outcomes) as fake:
        with open_llm(tmp_path, fake, options="&batch=on&batch_min=1", name="b") as llm:
            llm.complete(asks(10))
        second = fake.batches.batches["msgbatch_fake_0002"]
        assert len(second.requests) == 2 and "/v1/messages" not in paths(fake)


def test_a_non_retryable_item_fails_the_call_and_keeps_the_other_answers(tmp_path):
    requests = asks(10)
    invalid = FakeAnthropicServer(batch_delay=0.05, batch_outcomes=[None, ItemOutcome.INVALID])
    with invalid as fake, open_llm(tmp_path, fake) as llm, pytest.raises(LLMFatalError) as info:
        llm.complete(requests)
    message = str(info.value)
    assert "invalid_request_error" in message and "not retried" in message
    assert "\n" not in message
    with FakeAnthropicServer() as fake, open_llm(tmp_path, fake) as llm:
        assert llm.complete(requests)[1].text == "echo: q1"
        assert llm.accounting().total().paid_calls == 1  # the nine others were cached


def test_expired_items_are_sent_again_a_bounded_number_of_times(tmp_path):
    expired = [ItemOutcome.EXPIRED] * 16
    options = "&batch=on&batch_min=1&batch_resubmits=2"
    with FakeAnthropicServer(batch_delay=0.02, batch_outcomes=expired) as fake:
        with open_llm(tmp_path, fake, options=options, name="a") as llm:
            assert len(llm.complete(asks(8))) == 8
        assert len(fake.batches.batches) == 3
    options = "&batch=on&batch_min=1&batch_resubmits=1"
    with (FakeAnthropicServer(batch_delay=0.02, batch_outcomes=expired) as fake,
          open_llm(tmp_path, fake, options=options, name="b") as llm,
          pytest.raises(LLMFatalError, match="expired 2 times")):
        llm.complete(asks(8))


def test_a_canceled_item_is_an_error(tmp_path):
    with FakeAnthropicServer(batch_delay=0.02, batch_outcomes=[ItemOutcome.CANCELED]) as fake:
        with open_llm(tmp_path, fake) as llm, pytest.raises(LLMFatalError, match="canceled"):
            llm.complete(asks(8))
        assert len(llm.store) == 7


@pytest.mark.parametrize(("http", "retries"), [("httpx", 2), ("aiohttp", 1)])
def test_a_failed_status_check_is_retried_like_a_live_call(tmp_path, http, retries):
    """aiohttp itself sends a status check (a GET) again when its kept-alive connection drops
    (RFC 9112), so with it only the 529 costs a retry of ours (docs/models.md)."""
    faults = [None, Fault.OVERLOADED, Fault.CONNECTION_RESET]  # create, then two checks fail
    with (FakeAnthropicServer(batch_delay=0.05, faults=faults) as fake,
          open_llm(tmp_path, fake, options=f"&batch=on&http={http}") as llm):
        assert len(llm.complete(asks(8))) == 8
        assert llm.retries == retries


class Crash(Exception):
    """Stands for the process dying while it waits for its batch."""


async def crash(_seconds: float) -> None:
    raise Crash


def test_a_restarted_client_collects_the_journaled_batch_instead_of_paying_again(tmp_path):
    requests = asks(12)
    with FakeAnthropicServer(batch_delay=0.3) as fake:
        with open_llm(tmp_path, fake, sleep=crash) as llm, pytest.raises(Crash):
            llm.complete(requests)
        journal = BatchJournal(tmp_path / "c" / "batches.jsonl")
        (open_batch,) = journal.open_batches("anthropic:claude-haiku-4-5")
        assert set(open_batch.keys) == {key(r) for r in requests}
        with open_llm(tmp_path, fake) as llm:
            answers = llm.complete(requests)
        assert len(fake.batches.batches) == 1  # collected, not submitted again
        assert [a.text for a in answers] == [f"echo: q{i}" for i in range(12)]
        assert journal.open_batches("anthropic:claude-haiku-4-5") == []


def test_a_journaled_batch_that_is_gone_is_sent_again(tmp_path):
    requests = asks(8)
    journal = BatchJournal(tmp_path / "c" / "batches.jsonl")
    journal.submitted("msgbatch_gone", "anthropic:claude-haiku-4-5", [key(r) for r in requests])
    with FakeAnthropicServer(batch_delay=0.02) as fake, open_llm(tmp_path, fake) as llm:
        assert len(llm.complete(requests)) == 8
        assert len(fake.batches.batches) == 1
    assert journal.open_batches("anthropic:claude-haiku-4-5") == []


def test_a_torn_journal_line_is_ignored_and_not_joined(tmp_path):
    path = tmp_path / "batches.jsonl"
    path.write_text('{"event":"submitted","batch_id":"x","backend":"b","keys":["k"]}\n{"event":"sub')
    journal = BatchJournal(path)
    journal.submitted("y", "b", ["k2"])
    assert [b.batch_id for b in journal.open_batches("b")] == ["x", "y"]


def test_progress_lines_go_to_the_batch_logger(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="llm_cache.batch")
    with FakeAnthropicServer(batch_delay=0.1) as fake, open_llm(tmp_path, fake) as llm:
        llm.complete(asks(8))
    lines = [r.getMessage() for r in caplog.records if r.name == "llm_cache.batch"]
    assert "8 target_execution requests to claude-haiku-4-5-20251001 submitted" in lines[0]
    assert any("in_progress (8 processing)" in line and "next check in" in line
               for line in lines)
    assert "collected 8 succeeded" in lines[-1]


def test_bedrock_refuses_batches_in_one_line():
    for spec in ("bedrock:global.anthropic.claude-haiku-4-5-20251001-v1:0?region=us-east-1",
                 "bedrock:anthropic.claude-opus-4-8?region=us-east-1&endpoint=mantle"):
        with pytest.raises(SpecError) as info:
            backend_for(f"{spec}&batch=on")
        assert "not available on bedrock" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("options", ["batch=on&batch_min=0", "batch=maybe",
                                     "batch_min=4", "batch=on&batch_poll=-1"])
def test_bad_batch_options_are_spec_errors(options):
    with pytest.raises(SpecError):
        backend_for(f"anthropic:claude-haiku-4-5?{options}")


def test_the_fake_enforces_custom_id_rules_through_the_real_sdk():
    params = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]}
    with FakeAnthropicServer() as fake:
        client = anthropic.Anthropic(api_key="k", base_url=fake.url, max_retries=0)
        for ids in (["a" * 65], ["no spaces"], ["dup", "dup"], ["é"]):
            with pytest.raises(anthropic.BadRequestError):
                client.messages.batches.create(
                    requests=[{"custom_id": i, "params": params} for i in ids])
        batch = client.messages.batches.create(
            requests=[{"custom_id": "a" * 64, "params": params},
                      {"custom_id": "x", "params": {**params, "messages": [
                          {"role": "user", "content": " "}]}}])
        assert batch.processing_status == "ended"  # no delay configured
        results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
    assert results["a" * 64].type == "succeeded"
    assert results["x"].type == "errored"  # the whitespace-only text block, as on the API
    assert results["x"].error.error.type == "invalid_request_error"


@pytest.mark.parametrize(("kind", "code", "expected"), [
    ("overloaded_error", None, RetryKind.TRANSIENT), ("api_error", None, RetryKind.TRANSIENT),
    ("timeout_error", None, RetryKind.TRANSIENT), ("rate_limit_error", None, RetryKind.RATE_LIMIT),
    ("rate_limit_error", "enforced_spend_limit_reached", RetryKind.NO),
    ("invalid_request_error", None, RetryKind.NO), ("authentication_error", None, RetryKind.NO),
    ("billing_error", None, RetryKind.NO),
])
def test_errored_items_are_classified_like_the_live_call_with_that_error(kind, code, expected):
    error = {"type": kind, "message": "m", **({"details": {"error_code": code}} if code else {})}
    decision = classify_batch_error({"type": "error", "error": error})
    assert decision.kind is expected
    assert kind in decision.reason and (code is None or code in decision.reason)
