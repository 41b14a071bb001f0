"""The method through the real cache: scripted models behind `FunctionBackend`, and the real
Anthropic SDK against the local fake Messages API server. Same config, same events."""

from __future__ import annotations

import json
import socket

import pytest

from llm_cache.backends.anthropic_backend import AnthropicBackend
from llm_cache.backends.function import FunctionBackend
from llm_cache.client import CachedLLM
from llm_cache.errors import CacheMiss
from llm_cache.records import Role
from llm_cache.testing.fake_server import FakeAnthropicServer
from stratune_core.config.knobs import Config
from stratune_core.config.serde import unstructure
from stratune_core.round.run import run
from tests.support.toy import (
    OPTIMIZER_MODEL,
    TARGET_MODEL,
    InProcessLLM,
    ToyOptimizer,
    ToyTask,
    toy_responder,
    toy_target,
)

CONFIG = Config(seed=5, target_model=TARGET_MODEL, optimizer_model=OPTIMIZER_MODEL,
                screen_solved=8, screen_random=8, validation_frac=0.15)
TASK = ToyTask(n_train=48)


def _dump(result) -> str:
    return json.dumps([unstructure(e) for e in result.events], sort_keys=True)


@pytest.fixture(scope="module")
def reference():
    return run(CONFIG, TASK, InProcessLLM())


def _function_backends():
    return {
        Role.TARGET: FunctionBackend(toy_target, name="toy-target"),
        Role.OPTIMIZER: FunctionBackend(ToyOptimizer(), name="toy-optimizer"),
    }


def test_cached_run_equals_in_process_run_and_replays_offline(tmp_path, reference, monkeypatch):
    """Through the real cache the events equal the in-process run; a strict replay of the cache
    reproduces them with sockets blocked and no backend call."""
    with CachedLLM.open(tmp_path / "cache", backends=_function_backends(), mode="live") as llm:
        live = run(CONFIG, TASK, llm)
        paid = llm.accounting().total().paid_calls
    assert _dump(live) == _dump(reference)
    assert paid > 0

    def no_network(*_a, **_k):
        raise AssertionError("replay opened a socket")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    with CachedLLM.open(tmp_path / "cache", backends={}, mode="replay") as llm:
        replayed = run(CONFIG, TASK, llm)
        acct = llm.accounting().total()
    assert _dump(replayed) == _dump(reference)
    assert acct.paid_calls == 0 and acct.cache_hits == paid
    assert replayed.spent == live.spent  # the budget is logical: cache hits cost the same


def test_replay_with_a_changed_config_misses_loudly(tmp_path):
    with CachedLLM.open(tmp_path / "cache", backends=_function_backends(), mode="live") as llm:
        run(CONFIG, TASK, llm)
    with CachedLLM.open(tmp_path / "cache", backends={}, mode="replay") as llm, pytest.raises(CacheMiss):
        run(CONFIG.replace(seed=6), TASK, llm)


def test_anthropic_backend_against_fake_server_gives_the_same_run(tmp_path, reference):
    """The real SDK over HTTP to the fake Messages API produces the very same events."""
    with FakeAnthropicServer(responder=toy_responder()) as server:
        backends = {
            Role.TARGET: AnthropicBackend(TARGET_MODEL, api_key="test", base_url=server.url),
            Role.OPTIMIZER: AnthropicBackend(OPTIMIZER_MODEL, api_key="test", base_url=server.url),
        }
        with CachedLLM.open(tmp_path / "cache", backends=backends, mode="live", concurrency=8) as llm:
            result = run(CONFIG, TASK, llm)
        assert server.requests
    assert _dump(result) == _dump(reference)
