"""OpenAI-compatible servers and their context windows: a local stub speaking the chat API
counts tokens (one per word, four per message) and refuses over-long requests in the words of
vLLM (three generations), llama.cpp's llama-server, llama-cpp-python's server and ollama."""

from __future__ import annotations

import json

import pytest

from llm_cache.backends import backend_for
from llm_cache.backends.context import (
    MARGIN,
    REPAIR_REPLY,
    REPAIR_WORDS,
    ContextOverflowError,
    context_tokens,
    needed_context,
)
from llm_cache.backends.openai_context import parse_overflow, window_from_models
from llm_cache.backends.openai_window import TEMPLATE_FIXED, TEMPLATE_PER_MESSAGE, window_from_props
from llm_cache.client import CachedLLM
from llm_cache.errors import LLMFatalError
from llm_cache.key import canonical_request, key_of_canonical
from llm_cache.records import CallKind, Message, Request, Role
from llm_cache.retry import RetryPolicy
from tests.support.openai_server import ContextServer, refusal

FAST = RetryPolicy(max_retries=2, base_delay=0.0)


def ask(words: int, max_tokens: int = 16384, role: Role = Role.OPTIMIZER) -> Request:
    kind = CallKind.CANDIDATE_GENERATION if role is Role.OPTIMIZER else CallKind.TARGET_EXECUTION
    return Request(role=role, model="m", system="Rewrite the skill.",
                   messages=(Message.user(" ".join(["word"] * words)),),
                   max_tokens=max_tokens, kind=kind)


def prompt_of(request: Request) -> int:  # the stub's count: system + user message
    return len(request.system.split()) + 4 + len(request.user_text().split()) + 4


def fitted(request: Request, context: int) -> int:
    """What a first optimizer reply may take: half of what the prompt leaves once the repair
    turn's own words and reply are set aside (the repair quotes an unusable reply back); a
    target reply takes all of it."""
    left = context - prompt_of(request) - MARGIN
    if request.role is Role.OPTIMIZER:
        return (left - REPAIR_WORDS - REPAIR_REPLY - MARGIN) // 2
    return left


@pytest.fixture
def serve():
    servers: list[ContextServer] = []

    def start(flavour: str, context: int, **kw) -> ContextServer:
        servers.append(ContextServer(flavour, context, **kw))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def complete(server: ContextServer, request: Request, tmp_path=None):
    backend = backend_for(f"openai:m@{server.url}")
    with CachedLLM.open(tmp_path, backends={Role.OPTIMIZER: backend, Role.TARGET: backend},
                        retry_policy=FAST,
                        mode="live" if tmp_path else "off") as llm:
        return llm.complete([request])[0], llm.accounting()


def test_vllm_window_is_read_and_max_tokens_fitted_before_sending(serve, tmp_path):
    server = serve("vllm-old", 4096, window=True, tokenize=True)
    request = ask(300)
    response, accounting = complete(server, request, tmp_path / "c")
    expected = fitted(request, 4096)
    assert response.clamped_max_tokens == expected and response.text == "fine"
    # one chat request, never refused: the window and the count came first
    assert [b["max_tokens"] for b in server.chat] == [expected]
    assert server.paths[:2] == ["GET /v1/models", "POST /tokenize"]
    row = accounting.total()
    assert (row.clamped_calls, row.clamped_min) == (1, expected)
    # the cache keeps the clamp, under the key of the request as the core built it
    with CachedLLM.open(tmp_path / "c", backends={}, mode="replay") as llm:
        again = llm.complete([request])[0]
        assert again == response and again.from_cache
        key = key_of_canonical(canonical_request(request))
        assert llm.store.get(key).response.clamped_max_tokens == expected


def test_context_tokens_reports_the_served_window(serve):
    assert context_tokens(backend_for(f"openai:m@{serve('vllm-old', 8192, window=True).url}")) \
        == 8192
    assert context_tokens(backend_for(f"openai:m@{serve('ollama', 8192).url}")) is None
    assert context_tokens(backend_for("anthropic:claude-haiku-4-5")) is None


def test_a_target_reply_may_take_all_the_prompt_leaves(serve):
    server = serve("vllm-old", 1024, window=True, tokenize=True)
    request = ask(300, max_tokens=2048, role=Role.TARGET)
    response, _ = complete(server, request)
    assert response.clamped_max_tokens == 1024 - prompt_of(request) - MARGIN == fitted(request, 1024)


def test_a_request_that_fits_is_sent_unchanged_without_counting(serve):
    server = serve("vllm-old", 32768, window=True, tokenize=True)
    response, _ = complete(server, ask(50, max_tokens=1024))
    assert response.clamped_max_tokens is None
    assert server.chat[0]["max_tokens"] == 1024 and "POST /tokenize" not in server.paths


@pytest.mark.parametrize("flavour", ["vllm-old", "vllm-too-large", "vllm-at-least"])
def test_vllm_refusal_is_fitted_from_its_own_figures(serve, flavour):
    server = serve(flavour, 2048)  # no /v1/models window, no /tokenize: learn from the 400
    request = ask(500)
    response, accounting = complete(server, request)
    expected = fitted(request, 2048)
    assert [b["max_tokens"] for b in server.chat] == [16384, expected]
    assert response.clamped_max_tokens == expected
    assert accounting.total().retries == 0  # a fitted resend is not a retry


@pytest.mark.parametrize("flavour,tokenize", [("vllm-old", True), ("vllm-old", False),
                                              ("llama-server", False)])
def test_a_prompt_that_alone_does_not_fit_is_one_line_naming_the_window(serve, tmp_path,
                                                                         flavour, tokenize):
    server = serve(flavour, 512, window=tokenize, tokenize=tokenize)
    request = ask(600)
    with pytest.raises(LLMFatalError) as err:
        complete(server, request, tmp_path / "c")
    message = str(err.value)
    assert "\n" not in message and "Traceback" not in message
    assert isinstance(err.value, ContextOverflowError) and err.value.context == 512
    assert f"the prompt is {prompt_of(request):,} tokens" in message
    assert f"needs at least {needed_context(prompt_of(request), request):,}" in message
    assert "--max-model-len" in message
    with CachedLLM.open(tmp_path / "c", backends={}, mode="replay") as llm:
        assert len(llm.store) == 0  # nothing cached


def test_ollama_refusal_without_figures_gives_the_same_advice(serve):
    with pytest.raises(ContextOverflowError) as err:
        complete(serve("ollama", 256), ask(400))
    message = str(err.value)
    assert "input length exceeds the context length" in message
    assert "ollama num_ctx" in message and "\n" not in message


def test_parse_overflow_reads_each_servers_figures():
    cases = {
        "vllm-old": (4096, 3000), "vllm-too-large": (4096, 3000),
        "vllm-at-least": (4096, 3000), "llama-server": (4096, 3000), "ollama": (None, None),
    }
    for flavour, (context, prompt) in cases.items():
        _, body = refusal(flavour, 4096, 3000, 2000)
        overflow = parse_overflow(json.dumps(body))
        assert overflow is not None, flavour
        assert (overflow.context, overflow.prompt_tokens) == (context, prompt), flavour
    llama_cpp_python_completion = ("This model's maximum context length is 512 tokens, however "
                                   "you requested 700 tokens (600 in your prompt; 100 for the "
                                   "completion). Please reduce your prompt; or completion length.")
    found = parse_overflow(json.dumps({"error": {"message": llama_cpp_python_completion}}))
    assert found is not None and (found.context, found.prompt_tokens) == (512, 600)
    assert parse_overflow('{"error": {"message": "model not found"}}') is None
    assert parse_overflow("<html>Bad gateway</html>") is None


def test_window_from_models_picks_the_named_or_only_model():
    listing = {"data": [{"id": "a", "max_model_len": 1000}, {"id": "b", "max_model_len": 2000}]}
    assert window_from_models(listing, "b") == 2000
    assert window_from_models(listing, "c") is None
    assert window_from_models({"data": [{"id": "x", "max_model_len": 3000}]}, "c") == 3000
    assert window_from_models({"data": [{"id": "x"}]}, "x") is None  # ollama, OpenAI
    assert window_from_models([], "x") is None


def test_window_from_props_reads_a_slots_n_ctx():
    assert window_from_props({"default_generation_settings": {"n_ctx": 8192}}) == 8192
    assert window_from_props({"n_ctx": 2048}) == 2048
    assert window_from_props({"default_generation_settings": {}}) is None
    assert window_from_props([]) is None


def complete_spec(spec: str, request: Request):
    backend = backend_for(spec)
    with CachedLLM.open(None, backends={Role.OPTIMIZER: backend, Role.TARGET: backend},
                        retry_policy=FAST, mode="off") as llm:
        return llm.complete([request])[0]


def test_llama_server_window_comes_from_props_and_its_own_tokenizer(serve):
    server = serve("llama-server", 4096, window=True, tokenize=True)
    request = ask(300)
    response = complete_spec(f"openai:m@{server.url}", request)
    expected = fitted(request, 4096)
    assert response.clamped_max_tokens == expected
    assert [b["max_tokens"] for b in server.chat] == [expected]
    assert server.paths[:4] == ["GET /v1/models", "GET /props", "POST /apply-template",
                                "POST /tokenize"]


def test_llama_cpp_python_window_comes_from_the_spec_and_text_counting(serve):
    """It reports no window and cuts max_tokens silently: only ?n_ctx= lets the repair fit."""
    server = serve("llama-cpp-python", 4096, tokenize=True)
    request = ask(300)
    response = complete_spec(f"openai:m@{server.url}?n_ctx=4096", request)
    # counted as plain text (+1 word per role) with a fixed template allowance per message
    counted = prompt_of(request) - 8 + 2 + 2 * TEMPLATE_PER_MESSAGE + TEMPLATE_FIXED
    assert counted >= prompt_of(request)  # the allowance bounds the real template
    left = 4096 - counted - MARGIN
    expected = (left - REPAIR_WORDS - REPAIR_REPLY - MARGIN) // 2
    assert response.clamped_max_tokens == expected == server.chat[0]["max_tokens"]
    assert "POST /extras/tokenize/count" in server.paths
    assert context_tokens(backend_for(f"openai:m@{server.url}?n_ctx=2048")) == 2048
    assert context_tokens(backend_for(f"openai:m@{server.url}")) is None


@pytest.mark.parametrize("words", [100, 900, 1500, 1700])
def test_the_repair_turn_always_fits_after_a_fitted_reply(serve, words):
    """The repair quotes the first reply back: prompt + reply + repair words + the repair's
    reply stay inside the window whatever the prompt's length."""
    server = serve("llama-cpp-python", 4096, tokenize=True)
    first = ask(words)
    reply = complete_spec(f"openai:m@{server.url}?n_ctx=4096", first).clamped_max_tokens
    assert reply is not None and reply >= 32
    assert prompt_of(first) + 2 * reply + REPAIR_WORDS + REPAIR_REPLY + 2 * MARGIN <= 4096


@pytest.mark.parametrize("flavour,window,flag", [
    ("vllm-old", True, "vLLM's --max-model-len"),
    ("llama-server", True, "llama-server --ctx-size"),
    ("llama-cpp-python", False, "llama-cpp-python --n_ctx"),
    ("ollama", False, "ollama num_ctx"),
])
def test_overflow_advice_names_the_servers_own_flag(serve, flavour, window, flag):
    server = serve(flavour, 512, window=window, tokenize=True)
    spec = f"openai:m@{server.url}" + ("" if window else "?n_ctx=512")
    with pytest.raises(ContextOverflowError) as err:
        complete_spec(spec, ask(600))
    message = str(err.value)
    assert flag in message and "\n" not in message
    if not window:
        assert "?n_ctx=" in message
