"""The real anthropic SDK against the stdlib fake server: API key and Bedrock paths."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from llm_cache.backends import backend_for
from llm_cache.backends.anthropic_backend import AnthropicBackend, build_params
from llm_cache.client import CachedLLM
from llm_cache.errors import CacheMiss, LLMFatalError
from llm_cache.records import Message, Request, Role
from llm_cache.retry import RetryPolicy
from llm_cache.testing.fake_server import FakeAnthropicServer, Fault, default_responder

HAIKU = "claude-haiku-4-5-20251001"
FAST = RetryPolicy(max_retries=3, base_delay=0.0)
LONG_SKILL = "Follow these rules carefully. " * 600  # 18,000 chars: >= 4,096 tokens at //4


def ask(question: str, system: str = "Be brief.", **kw) -> Request:
    return Request(role=Role.TARGET, model=HAIKU, system=system,
                   messages=(Message.user(question),), max_tokens=32, **kw)


def llm_for(tmp_path, url: str, *, timeout: float = 5.0, name: str = "c", http: str | None = None,
            **kw) -> CachedLLM:
    backend = AnthropicBackend("claude-haiku-4-5", api_key="test-key", base_url=url,
                               timeout=timeout, canonical=HAIKU, http=http)
    return CachedLLM.open(tmp_path / name, backends={Role.TARGET: backend},
                          retry_policy=kw.pop("retry_policy", FAST), **kw)


@pytest.fixture
def fake():
    with FakeAnthropicServer() as server:
        yield server


def test_plain_call_reaches_the_fake_with_the_expected_wire_shape(tmp_path, fake):
    with llm_for(tmp_path, fake.url) as llm:
        (response,) = llm.complete([ask("What is 2+2?")])
    assert response.text == "echo: What is 2+2?"
    assert response.model == "claude-haiku-4-5" and response.stop_reason == "end_turn"
    assert response.usage.output_tokens == len(response.text) // 4
    (seen,) = fake.requests
    assert seen.path == "/v1/messages"
    assert seen.headers["authorization"] == "Bearer test-key"
    assert seen.headers["x-stainless-retry-count"] == "0"
    assert seen.body["system"] == [{"type": "text", "text": "Be brief."}]
    assert "temperature" not in seen.body and "cache_control" not in seen.body


def test_temperature_is_sent_only_when_set_and_through_the_body(tmp_path, fake):
    with llm_for(tmp_path, fake.url) as llm:
        llm.complete([ask("a"), ask("b", temperature=0)])
    bodies = {r.body["messages"][0]["content"][0]["text"]: r.body for r in fake.requests}
    assert "temperature" not in bodies["a"]
    assert bodies["b"]["temperature"] == 0.0


def test_stop_sequences_are_sent(tmp_path, fake):
    with llm_for(tmp_path, fake.url) as llm:
        llm.complete([ask("a", stop=("</answer>",))])
    assert fake.requests[0].body["stop_sequences"] == ["</answer>"]


def test_long_skill_gets_cache_control_and_prompt_cache_usage(tmp_path, fake):
    with llm_for(tmp_path, fake.url) as llm:
        first = llm.complete([ask("q1", system=LONG_SKILL)])[0]
        second = llm.complete([ask("q2", system=LONG_SKILL)])[0]
    assert fake.requests[0].body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert first.usage.cache_write_tokens == len(LONG_SKILL) // 4
    assert (second.usage.cache_read_tokens, second.usage.cache_write_tokens) == (
        len(LONG_SKILL) // 4, 0)
    assert second.usage.input_tokens == 0  # "q2" is under one token by the //4 estimate


def test_short_skill_gets_no_marker_below_the_model_minimum():
    params = build_params(ask("q", system="x" * 4000), send_model="m", cache_min_tokens=4096)
    assert "cache_control" not in params["system"][0]
    params = build_params(ask("q", system="x" * 4000), send_model="m", cache_min_tokens=1024)
    assert params["system"][0]["cache_control"] == {"type": "ephemeral"}


@pytest.mark.parametrize(
    "fault",
    [Fault.RATE_LIMIT, Fault.OVERLOADED, Fault.SERVER_ERROR, Fault.CONNECTION_RESET,
     Fault.TRUNCATED_JSON, Fault.STALL],
)
def test_transient_faults_are_retried_once_and_only_the_success_is_cached(tmp_path, fault):
    # The stall outlasts the timeout by far, and the timeout leaves the retried call ample
    # time on a loaded machine: only the stalled try may time out.
    with FakeAnthropicServer(faults=[fault], stall_seconds=30.0) as fake:
        with llm_for(tmp_path, fake.url, timeout=3.0) as llm:
            (response,) = llm.complete([ask("q")])
            assert llm.retries == 1 and llm.accounting().total().retries == 1
            assert len(llm.store) == 1
            assert llm.complete([ask("q")])[0].from_cache
        assert response.text == "echo: q"
        assert [r.fault for r in fake.requests] == [fault, None]


@pytest.mark.parametrize(
    ("fault", "words"),
    [(Fault.UNAUTHORIZED, "401"), (Fault.BAD_REQUEST, "400"),
     (Fault.SPEND_CAP, "enforced_spend_limit_reached")],
)
def test_unrecoverable_errors_fail_at_once_and_cache_nothing(tmp_path, fault, words):
    with FakeAnthropicServer(faults=[fault]) as fake:
        with llm_for(tmp_path, fake.url) as llm:
            with pytest.raises(LLMFatalError, match=words) as info:
                llm.complete([ask("q")])
            assert len(llm.store) == 0 and llm.retries == 0
        assert len(fake.requests) == 1
    assert "\n" not in str(info.value)


def test_retries_are_bounded(tmp_path):
    with FakeAnthropicServer(faults=[Fault.OVERLOADED] * 5) as fake:
        with llm_for(tmp_path, fake.url, retry_policy=RetryPolicy(max_retries=2, base_delay=0)) \
                as llm:
            with pytest.raises(LLMFatalError, match="gave up after 2 retries"):
                llm.complete([ask("q")])
            assert len(llm.store) == 0
        assert len(fake.requests) == 3


def test_seeded_random_faults_are_all_absorbed(tmp_path):
    faults = (Fault.RATE_LIMIT, Fault.OVERLOADED, Fault.SERVER_ERROR, Fault.TRUNCATED_JSON)
    with FakeAnthropicServer(fault_rate=0.3, fault_kinds=faults, seed=7) as fake:
        with llm_for(tmp_path, fake.url, retry_policy=RetryPolicy(max_retries=8, base_delay=0)) \
                as llm:
            out = llm.complete([ask(f"q{i}") for i in range(20)])
            retries = llm.retries
        injected = sum(r.fault is not None for r in fake.requests)
    assert [r.text for r in out] == [f"echo: q{i}" for i in range(20)]
    assert injected > 0 and retries == injected


def test_identical_requests_in_flight_are_sent_once(tmp_path, fake):
    with llm_for(tmp_path, fake.url) as llm:
        out = llm.complete([ask("same")] * 5)
    assert len(fake.requests) == 1 and len({r.text for r in out}) == 1


def test_concurrency_limit_holds_against_the_server(tmp_path):
    lock, state = threading.Lock(), {"now": 0, "peak": 0}

    def responder(body):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.02)
        with lock:
            state["now"] -= 1
        return default_responder(body)

    with FakeAnthropicServer(responder=responder) as fake, \
            llm_for(tmp_path, fake.url, concurrency=3) as llm:
        out = llm.complete([ask(f"q{i}") for i in range(12)])
    assert [r.text for r in out] == [f"echo: q{i}" for i in range(12)]
    assert 1 <= state["peak"] <= 3


def test_base_url_from_the_environment_is_honoured(tmp_path, fake, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    backend = backend_for("anthropic:claude-haiku-4-5", api_key="k")
    with CachedLLM.open(tmp_path / "c", backends={Role.TARGET: backend}) as llm:
        assert llm.complete([ask("env")])[0].text == "echo: env"
    assert len(fake.requests) == 1


def test_bedrock_path_and_replay_against_the_api_backend(tmp_path, fake):
    bedrock = backend_for("bedrock:global.anthropic.claude-haiku-4-5-20251001-v1:0"
                          "?region=us-east-1", api_key="aws-key", base_url=fake.url)
    with CachedLLM.open(tmp_path / "c", backends={Role.TARGET: bedrock}) as llm:
        recorded = llm.complete([ask("on bedrock")])
    (seen,) = fake.requests
    assert seen.path == "/model/global.anthropic.claude-haiku-4-5-20251001-v1:0/invoke"
    assert "model" not in seen.body and "anthropic_version" in seen.body
    assert seen.headers["authorization"] == "Bearer aws-key"
    # Different provider, credentials and server: the same key, so no new request.
    with FakeAnthropicServer() as other, llm_for(tmp_path, other.url) as llm:
        assert llm.complete([ask("on bedrock")]) == recorded
        assert other.requests == ()


def test_bedrock_anthropic_version_override_reaches_the_body(tmp_path, fake):
    backend = AnthropicBackend("anthropic.claude-haiku-4-5-20251001-v1:0", provider="bedrock",
                               aws_region="us-east-1", api_key="k", base_url=fake.url,
                               bedrock_anthropic_version="bedrock-2023-05-31")
    with CachedLLM.open(tmp_path / "c", backends={Role.TARGET: backend}) as llm:
        llm.complete([ask("v")])
    assert fake.requests[0].body["anthropic_version"] == "bedrock-2023-05-31"


def test_strict_replay_opens_no_socket(tmp_path, fake, monkeypatch):
    with llm_for(tmp_path, fake.url) as llm:
        recorded = llm.complete([ask("a"), ask("b")])

    def refuse(*args, **kwargs):
        raise ConnectionRefusedError("socket blocked by test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    with llm_for(tmp_path, fake.url, mode="replay") as llm:
        assert llm.complete([ask("b"), ask("a")]) == (recorded[1], recorded[0])
        with pytest.raises(CacheMiss):
            llm.complete([ask("c")])
    # Control: the same miss in live mode does try the network, and the block stops it.
    live = llm_for(tmp_path, fake.url, retry_policy=RetryPolicy(max_retries=0))
    with live, pytest.raises(LLMFatalError, match="Connection"):
        live.complete([ask("c")])
    assert len(fake.requests) == 2


def test_model_level_refusals_and_truncations_are_normal_cached_responses(tmp_path):
    def responder(body):
        stop = "refusal" if "forbidden" in str(body["messages"]) else "max_tokens"
        return {"id": "m", "type": "message", "role": "assistant", "model": HAIKU,
                "content": [{"type": "text", "text": "partial"}], "stop_reason": stop,
                "usage": {"input_tokens": 3, "output_tokens": 32}}

    with FakeAnthropicServer(responder=responder) as fake, llm_for(tmp_path, fake.url) as llm:
        first = llm.complete([ask("forbidden topic"), ask("long essay")])
        again = llm.complete([ask("forbidden topic"), ask("long essay")])
        assert len(fake.requests) == 2
    assert [r.stop_reason for r in first] == ["refusal", "max_tokens"]
    assert again == first and all(r.from_cache for r in again)


def test_prompt_caching_can_be_switched_off_from_the_spec():
    from llm_cache.spec import parse_spec

    spec = parse_spec("anthropic:claude-haiku-4-5?prompt_caching=off")
    backend = AnthropicBackend.from_spec(spec, **dict(spec.options))
    params = build_params(ask("q", system="x" * 40_000), send_model="m",
                          cache_min_tokens=backend.cache_min_tokens)
    assert "cache_control" not in params["system"][0]
    with pytest.raises(ValueError, match="prompt_caching='maybe'"):
        AnthropicBackend.from_spec(spec, prompt_caching="maybe")


@pytest.mark.parametrize("http", ["aiohttp", "httpx"])
def test_every_client_of_the_process_shares_one_tls_context(tmp_path, fake, http):
    """Each SDK client would load the CA bundle again; they share the process's context, and
    the SDK's other defaults (connection limits, proxies from the environment) stay."""
    import anthropic

    from llm_cache.backends.anthropic_backend import shared_ssl_context

    backends = [AnthropicBackend("claude-haiku-4-5", api_key="k", base_url=fake.url, http=http)
                for _ in range(2)]
    clients = [b._sdk() for b in backends]
    if http == "aiohttp":
        kind = anthropic.DefaultAioHttpClient
        contexts = {id(c._client._transport.ssl_context) for c in clients}
    else:
        kind = anthropic.DefaultAsyncHttpxClient
        contexts = {id(c._client._transport._pool._ssl_context) for c in clients}
    assert contexts == {id(shared_ssl_context())}
    assert all(type(c._client) is kind for c in clients)
    with llm_for(tmp_path, fake.url, http=http) as llm:  # and a call still goes through
        (response,) = llm.complete([ask("still there?")])
    assert response.text == "echo: still there?"


def test_the_http_library_is_aiohttp_unless_the_spec_says_httpx():
    from llm_cache.spec import parse_spec

    assert AnthropicBackend("claude-haiku-4-5").http == "aiohttp"
    spec = parse_spec("anthropic:claude-haiku-4-5?http=httpx")
    assert AnthropicBackend.from_spec(spec, **dict(spec.options)).http == "httpx"
    with pytest.raises(ValueError, match="http='requests': use aiohttp or httpx"):
        AnthropicBackend("claude-haiku-4-5", http="requests")
