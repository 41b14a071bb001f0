"""The first real call: spend caps, x-should-retry, blank blocks, timeouts, proxies, prices.

Everything goes through the real SDK to the fake server, which answers as the real service
does (see `llm_cache/testing/fake_replies.py`). Each refusal the fake makes is checked against the SDK
on its own first, so the fake is not just agreeing with our backend.
"""

from __future__ import annotations

import contextlib
import re
import socket

import anthropic
import pytest

from llm_cache.backends import backend_for
from llm_cache.backends.anthropic_backend import AnthropicBackend
from llm_cache.backends.anthropic_params import CONNECT_TIMEOUT, read_timeout_for
from llm_cache.backends.base import BlankTextError
from llm_cache.backends.function import FunctionBackend
from llm_cache.client import CachedLLM
from llm_cache.errors import LLMFatalError
from llm_cache.prices import default_prices
from llm_cache.records import Message, Request, Response, Role, Usage
from llm_cache.retry import RetryPolicy
from llm_cache.testing.fake_server import FakeAnthropicServer, Fault

HAIKU = "claude-haiku-4-5-20251001"
FAST = RetryPolicy(max_retries=2, base_delay=0.0, rate_limit_base_delay=0.0)


def ask(*messages: Message, system: str = "Be brief.") -> Request:
    return Request(role=Role.TARGET, model=HAIKU, system=system,
                   messages=messages or (Message.user("q"),), max_tokens=32)


def open_llm(tmp_path, url: str, **options) -> CachedLLM:
    backend = AnthropicBackend("claude-haiku-4-5", api_key=options.pop("api_key", "key"),
                               base_url=url, canonical=HAIKU, **options)
    return CachedLLM.open(tmp_path / "c", backends={Role.TARGET: backend}, retry_policy=FAST)


def sdk(url: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="key", base_url=url, max_retries=1)


def test_the_spend_cap_is_the_sdks_dedicated_error_and_stops_at_once(tmp_path):
    cap = getattr(anthropic, "EnforcedSpendLimitReachedError", None)
    with FakeAnthropicServer(faults=[Fault.SPEND_CAP]) as fake:
        if cap is not None:
            with pytest.raises(cap):
                sdk(fake.url).with_options(max_retries=0).messages.create(
                    model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    with FakeAnthropicServer(faults=[Fault.SPEND_CAP]) as fake, open_llm(tmp_path, fake.url) as llm:
        with pytest.raises(LLMFatalError) as info:
            llm.complete([ask()])
        assert len(fake.requests) == 1 and llm.retries == 0 and len(llm.store) == 0
    message = str(info.value)
    assert "enforced_spend_limit_reached" in message and "2026-12-01" in message
    assert "\n" not in message


@pytest.mark.parametrize(("fault", "header", "attempts"), [
    (Fault.OVERLOADED, "false", 1),  # a 529 the server says not to retry
    (Fault.BAD_REQUEST, "true", 2),  # a 400 the server says to retry
    (Fault.OVERLOADED, None, 2),
])
def test_x_should_retry_is_obeyed_as_the_sdk_obeys_it(tmp_path, fault, header, attempts):
    headers = {fault: {"x-should-retry": header}} if header else {}
    # The SDK on its own, one retry allowed:
    with FakeAnthropicServer(faults=[fault], fault_headers=headers) as fake:
        with contextlib.suppress(anthropic.APIStatusError):
            sdk(fake.url).messages.create(model="m", max_tokens=5,
                                          messages=[{"role": "user", "content": "x"}])
        assert len(fake.requests) == attempts
    # Our retry layer, which turns the SDK's retries off, makes the same decision:
    with FakeAnthropicServer(faults=[fault], fault_headers=headers) as fake, \
            open_llm(tmp_path, fake.url) as llm:
        if attempts == 1:
            with pytest.raises(LLMFatalError, match="x-should-retry"):
                llm.complete([ask()])
        else:
            assert llm.complete([ask()])[0].text == "echo: q"
        assert len(fake.requests) == attempts


def test_the_fake_refuses_whitespace_only_blocks_as_the_api_does():
    with FakeAnthropicServer() as fake, pytest.raises(anthropic.BadRequestError,
                                                      match="non-whitespace text"):
        sdk(fake.url).messages.create(model="m", max_tokens=5, messages=[
            {"role": "user", "content": [{"type": "text", "text": " \n"}]}])


@pytest.mark.parametrize("messages", [
    (Message.user("  \n\t"),),
    (Message.user(""),),
    (Message.user("q"), Message(role="assistant", content="   "), Message.user("fix it")),
], ids=["blank-input", "empty-input", "blank-repair-reply"])
def test_no_backend_sends_a_blank_text_block(tmp_path, messages):
    request = ask(*messages)
    number = next(i for i, m in enumerate(messages, 1) if not m.text().strip())
    with FakeAnthropicServer() as fake:
        backends = [
            AnthropicBackend("claude-haiku-4-5", api_key="k", base_url=fake.url, canonical=HAIKU),
            backend_for(f"bedrock:global.anthropic.{HAIKU}-v1:0?region=us-east-1", api_key="k",
                        base_url=fake.url),
            backend_for("openai:m@http://127.0.0.1:9/v1"),  # never reached: refused first
            FunctionBackend(lambda r: Response(text="x")),
        ]
        for i, backend in enumerate(backends):
            with CachedLLM.open(tmp_path / str(i), backends={Role.TARGET: backend}) as llm:
                with pytest.raises(BlankTextError, match=f"message {number} ") as info:
                    llm.complete([request])
                assert len(llm.store) == 0 and "\n" not in str(info.value)
        assert fake.requests == ()


def test_a_whitespace_only_system_prompt_is_left_out(tmp_path):
    with FakeAnthropicServer() as fake, open_llm(tmp_path, fake.url) as llm:
        assert llm.complete([ask(system=" \n ")])[0].text == "echo: q"
    assert "system" not in fake.requests[0].body


def test_timeouts_keep_a_short_connect_and_a_read_scaled_to_the_output(tmp_path):
    with FakeAnthropicServer() as fake, open_llm(tmp_path, fake.url) as llm:
        llm.complete([ask()])
    headers = fake.requests[0].headers
    assert headers["x-stainless-read-timeout"] == str(read_timeout_for(32))
    assert read_timeout_for(32) < read_timeout_for(4096) < read_timeout_for(16384) <= 600
    assert read_timeout_for(10**6) == 600
    timeout = AnthropicBackend("m", api_key="k")._timeout_for(ask())
    assert (timeout.connect, timeout.read) == (CONNECT_TIMEOUT, read_timeout_for(32))


def test_a_dead_endpoint_fails_on_the_connect_timeout_not_the_read_timeout(tmp_path):
    """A listener whose backlog is full drops new SYNs, like a host that is down."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(4):
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", port))
        fillers.append(filler)
    try:
        llm = open_llm(tmp_path, f"http://127.0.0.1:{port}", timeout=300.0, connect_timeout=0.3)
        with llm, pytest.raises(LLMFatalError, match="gave up after 2 retries.*APITimeoutError"):
            llm.complete([ask()])
    finally:
        for s in (*fillers, listener):
            s.close()


def test_a_proxy_that_wants_x_api_key_gets_a_one_line_hint_and_the_option_works(tmp_path):
    with FakeAnthropicServer(proxy_auth_header="x-api-key") as fake:
        with open_llm(tmp_path, fake.url) as llm, pytest.raises(LLMFatalError) as info:
            llm.complete([ask()])
        assert fake.requests[0].headers["authorization"] == "Bearer key"
        message = str(info.value)
        assert "HTTP 401" in message and "?auth_header=x-api-key" in message
        assert "\n" not in message and len(fake.requests) == 1
        backend = backend_for(f"anthropic:claude-haiku-4-5?auth_header=x-api-key&base_url="
                              f"{fake.url}", api_key="proxy-key")
        with CachedLLM.open(tmp_path / "p", backends={Role.TARGET: backend}) as llm:
            assert llm.complete([ask()])[0].text == "echo: q"
        sent = fake.requests[-1].headers
    assert sent["x-api-key"] == "proxy-key" and "authorization" not in sent


def test_a_200_that_is_not_json_is_one_line_and_not_cached(tmp_path):
    with FakeAnthropicServer(faults=[Fault.NOT_JSON]) as fake, \
            open_llm(tmp_path, fake.url) as llm:
        with pytest.raises(LLMFatalError) as info:
            llm.complete([ask()])
        assert len(fake.requests) == 1 and len(llm.store) == 0
    message = str(info.value)
    assert "not JSON" in message and "Sign in to continue" in message
    assert "base URL" in message and "\n" not in message
    # JSON that is not a message (a gateway's own status object) is refused the same way.
    with FakeAnthropicServer(responder=lambda body: {"status": "ok"}) as fake, \
            open_llm(tmp_path / "json", fake.url) as llm:
        with pytest.raises(LLMFatalError, match="not a Messages API message"):
            llm.complete([ask()])
        assert len(llm.store) == 0


def test_prices_model_1h_writes_batch_and_regional_endpoints():
    table = default_prices()
    haiku = table.price("claude-haiku-4-5")
    assert haiku is not None
    million = Usage(input_tokens=10**6, cache_write_tokens=10**6, cache_read_tokens=10**6,
                    output_tokens=10**6)
    assert haiku.cost(million) == pytest.approx(1 + 1.25 + 0.10 + 5)
    assert haiku.cost(million, cache_ttl="1h") == pytest.approx(1 + 2 + 0.10 + 5)
    estimate = table.estimate("claude-haiku-4-5", million)
    assert estimate is not None
    assert estimate.batch == pytest.approx(estimate.standard * 0.5)
    assert estimate.regional == pytest.approx(estimate.standard * 1.1)
    for model, price in table.models.items():
        assert price.cache_write == pytest.approx(1.25 * price.input), model
        assert price.cache_write_1h == pytest.approx(2 * price.input), model
    # Minimum cacheable prompt lengths as the prompt-caching page lists them.
    minimums = {m: table.cache_min_tokens(m) for m in (
        "claude-sonnet-4-6", "claude-haiku-4-5", "claude-opus-4-7", "claude-opus-4-8",
        "claude-opus-5", "claude-opus-5-5")}
    assert minimums == {"claude-sonnet-4-6": 1024, "claude-haiku-4-5": 4096,
                        "claude-opus-4-7": 2048, "claude-opus-4-8": 1024, "claude-opus-5": 512,
                        "claude-opus-5-5": 512}


def test_plan_shows_batch_regional_and_cache_prices(tmp_path, capsys, monkeypatch):
    from replay.commands.app import main

    task = tmp_path / "t.jsonl"
    task.write_text("".join(
        f'{{"id": "t{i}", "input": "What is {i} + {i}?", "expected": "{2 * i}", '
        f'"split": "{"train" if i < 8 else "test"}"}}\n' for i in range(10)), encoding="utf-8")
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["plan", "--task", str(task), "--target", "anthropic:claude-haiku-4-5",
                 "--optimizer", "anthropic:claude-sonnet-4-6"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert re.search(r"~\$[\d.]+ \(Batch API ~\$[\d.]+; regional Bedrock/Google Cloud "
                     r"endpoint ~\$[\d.]+\)", out), out
    assert "cache write $1.25 (5 min) or $2 (1 h), read $0.10" in out
    assert "cache write $3.75 (5 min) or $6 (1 h), read $0.30" in out


def test_every_retry_prints_one_line_through_the_shell(tmp_path, capsys, monkeypatch):
    from replay.commands.app import main

    task = tmp_path / "t.jsonl"
    task.write_text('{"id": "a", "input": "What is 1 + 1?", "expected": "2", "split": "train"}\n'
                    '{"id": "b", "input": "What is 2 + 2?", "expected": "4", "split": "test"}\n',
                    encoding="utf-8")
    skill = tmp_path / "skill.txt"
    skill.write_text("Answer with the number only.", encoding="utf-8")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "key")
    monkeypatch.setenv("COLUMNS", "250")
    with FakeAnthropicServer(faults=[Fault.RATE_LIMIT, Fault.OVERLOADED]) as fake:
        code = main(["evaluate", "--skill", str(skill), "--task", str(task), "--target",
                     f"anthropic:claude-haiku-4-5?base_url={fake.url}",
                     "--cache-dir", str(tmp_path / "cache")])
    assert code == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "retry " in ln]
    assert len(lines) == 2, lines
    assert re.search(r"retry 1/6 in 0\.0 s: .*HTTP 429 rate_limit_error", lines[0])
    assert re.search(r"retry 2/6 in \d+\.\d s: .*HTTP 529 overloaded_error", lines[1])
