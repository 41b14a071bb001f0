"""OpenAI-compatible backend against a small stdlib chat-completions server."""

from __future__ import annotations

import pytest

from llm_cache.backends import backend_for
from llm_cache.backends.openai_compat import OpenAICompatBackend, chat_url, parse_completion
from llm_cache.client import CachedLLM
from llm_cache.errors import LLMFatalError
from llm_cache.key import request_key
from llm_cache.records import ImageBlock, Message, Request, Role, TextBlock
from llm_cache.retry import RetryPolicy
from replay.models.specs import canonical_model
from tests.support.openai_server import JsonServer

FAST = RetryPolicy(max_retries=3, base_delay=0.0)


class ChatServer(JsonServer):
    """Answers `POST /v1/chat/completions`; `statuses` are served first, one per request."""

    def __init__(self, statuses: list[int] | None = None) -> None:
        self.statuses = list(statuses or [])
        self.seen: list[dict] = []
        self.headers: list[dict] = []
        super().__init__()

    def post(self, path: str, body: dict, headers: dict[str, str]) -> tuple[int, dict]:
        self.seen.append(body)
        self.headers.append(headers)
        status = self.statuses.pop(0) if self.statuses else 200
        if path != "/v1/chat/completions":
            status = 404
        if status != 200:
            return status, {"error": {"message": f"status {status}"}}
        text = "re: " + body["messages"][-1]["content"]
        return 200, {"model": body["model"], "choices": [
            {"message": {"role": "assistant", "content": text},
             "finish_reason": "length" if body["max_tokens"] < 5 else "stop"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3,
                      "prompt_tokens_details": {"cached_tokens": 4}}}


@pytest.fixture
def server():
    s = ChatServer()
    yield s
    s.close()


def ask(q: str, **kw) -> Request:
    return Request(role=Role.TARGET, model=kw.pop("model", "qwen"), system="Be brief.",
                   messages=(Message.user(q),), max_tokens=kw.pop("max_tokens", 16), **kw)


def open_llm(tmp_path, url: str) -> CachedLLM:
    backend = backend_for(f"openai:qwen-served@{url}", api_key="sk-test")
    return CachedLLM.open(tmp_path / "c", backends={Role.TARGET: backend}, retry_policy=FAST)


def test_chat_completion_round_trip_and_cache(tmp_path, server):
    with open_llm(tmp_path, server.url) as llm:
        (r,) = llm.complete([ask("hello")])
        assert llm.complete([ask("hello")])[0].from_cache
    assert r.text == "re: hello" and r.stop_reason == "end_turn" and r.model == "qwen-served"
    assert (r.usage.input_tokens, r.usage.cache_read_tokens, r.usage.output_tokens) == (8, 4, 3)
    (body,) = server.seen
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    # servers sample at their own default temperature unless told: always sent, with a seed
    assert (body["temperature"], body["seed"]) == (0.0, 0) and "stop" not in body
    assert server.headers[0]["authorization"] == "Bearer sk-test"


def test_the_specs_sampling_is_sent_and_is_part_of_the_key(tmp_path, server):
    specs = {f"openai:qwen-served@{server.url}": (0.0, 0),
             f"openai:qwen-served@{server.url}?temperature=0.7&seed=5": (0.7, 5),
             f"openai:qwen-served@{server.url}?seed=none": (0.0, None)}
    keys = set()
    for spec, (temperature, seed) in specs.items():
        request = ask("hello", model=canonical_model(spec))
        keys.add(request_key(request))
        with CachedLLM.open(tmp_path / "c", backends={Role.TARGET: backend_for(spec)},
                            retry_policy=FAST) as llm:
            llm.complete([request])
        body = server.seen[-1]
        assert body["temperature"] == temperature and body.get("seed") == seed
        assert body["model"] == "qwen-served"  # the canonical id is never sent
    assert len(server.seen) == len(keys) == 3  # three keys: no answer served for another


def test_temperature_stop_and_length_finish(tmp_path, server):
    with open_llm(tmp_path, server.url) as llm:
        (r,) = llm.complete([ask("x", temperature=0, stop=("\n",), max_tokens=2)])
    assert server.seen[0]["temperature"] == 0.0 and server.seen[0]["stop"] == ["\n"]
    assert r.stop_reason == "max_tokens"


def test_server_errors_are_retried_and_client_errors_are_fatal(tmp_path):
    server = ChatServer([500, 503])
    try:
        with open_llm(tmp_path, server.url) as llm:
            assert llm.complete([ask("a")])[0].text == "re: a"
            assert llm.retries == 2
        server.statuses = [401]
        with open_llm(tmp_path, server.url) as llm, pytest.raises(LLMFatalError, match="401"):
            llm.complete([ask("b")])
    finally:
        server.close()


def test_unreachable_server_gives_up_after_bounded_retries(tmp_path):
    backend = OpenAICompatBackend("m", base_url="http://127.0.0.1:9/v1", timeout=1.0)
    llm = CachedLLM.open(tmp_path / "c", backends={Role.TARGET: backend},
                         retry_policy=RetryPolicy(max_retries=1, base_delay=0))
    with llm, pytest.raises(LLMFatalError, match="gave up after 1 retries"):
        llm.complete([ask("a")])


def test_images_become_data_urls():
    from llm_cache.backends.openai_compat import build_body

    msg = Message(role="user", content=(TextBlock(text="read"),
                                        ImageBlock(media_type="image/png", data="QUJD")))
    body = build_body(Request(role=Role.TARGET, model="m", system="", messages=(msg,),
                              max_tokens=4), send_model="m")
    assert body["messages"][0]["content"][1]["image_url"]["url"] == "data:image/png;base64,QUJD"


@pytest.mark.parametrize(("base", "url"), [
    ("http://h:8000/v1", "http://h:8000/v1/chat/completions"),
    ("http://h:8000/v1/", "http://h:8000/v1/chat/completions"),
    ("http://h:11434", "http://h:11434/v1/chat/completions"),
])
def test_chat_url(base, url):
    assert chat_url(base) == url


def test_missing_usage_is_zero():
    r = parse_completion({"choices": [{"message": {"content": None}, "finish_reason": None}]})
    assert r.text == "" and r.usage.total == 0


@pytest.mark.parametrize(("base_url", "expected"), [
    ("http://127.0.0.1:8000/v1", 3600.0), ("http://localhost:11434/v1", 3600.0),
    ("http://[::1]:8000/v1", 3600.0), ("https://api.example.com/v1", 600.0),
    ("http://10.0.0.5:8000/v1", 600.0)])
def test_a_server_on_this_machine_gets_an_hour_to_answer(base_url, expected):
    """A local CPU server re-generates a reply the client sent again after a read timeout, so a
    local server is given an hour by default; an explicit ?timeout= always wins."""
    assert OpenAICompatBackend("m", base_url=base_url).read_timeout == expected
    assert OpenAICompatBackend("m", base_url=base_url, timeout=5.0).read_timeout == 5.0
