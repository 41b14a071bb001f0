"""Fault injection through the real SDK: the toy world served by the fake Anthropic server.

Transient faults (429 with retry-after, 529, 500, reset, stall/timeout, truncated JSON) must be
invisible in the result; unrecoverable ones (401, a 429 without retry-after) must stop the run
with a one-line `LLMFatalError` and leave a cache that a fault-free rerun completes from.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.common import OPTIMIZER_MODEL, TARGET_MODEL, ToyResponder, toy_config
from llm_cache.backends.anthropic_backend import AnthropicBackend
from llm_cache.client import CachedLLM
from llm_cache.errors import CacheCorruptError, LLMFatalError
from llm_cache.records import Role
from llm_cache.retry import RetryPolicy
from llm_cache.store import CacheStore
from llm_cache.testing.fake_server import FakeAnthropicServer, Fault, LoggedRequest
from stratune_core.config.serde import unstructure
from stratune_core.round.run import RunResult, run
from tests.support.toy import InProcessLLM, ToyTask

TRANSIENT = (Fault.RATE_LIMIT, Fault.OVERLOADED, Fault.SERVER_ERROR, Fault.CONNECTION_RESET,
             Fault.STALL, Fault.TRUNCATED_JSON)
MAX_RETRIES = 5
# No waiting between retries: the schedule of faults, not the clock, is under test.
POLICY = RetryPolicy(max_retries=MAX_RETRIES, base_delay=0.0, max_delay=0.0)
N_TRAIN = 24


def _task() -> ToyTask:
    return ToyTask(n_train=N_TRAIN)


def _open(cache: Path, url: str) -> CachedLLM:
    # The client timeout is far below the stall, so a stalled call is a timeout, and far above
    # a loaded machine's answer time, so no other call is.
    backends = {
        Role.TARGET: AnthropicBackend(TARGET_MODEL, api_key="k", base_url=url, timeout=2.0),
        Role.OPTIMIZER: AnthropicBackend(OPTIMIZER_MODEL, api_key="k", base_url=url, timeout=2.0),
    }
    return CachedLLM.open(cache, backends=backends, mode="live", concurrency=8,
                          retry_policy=POLICY)


def _server(**faults: object) -> FakeAnthropicServer:
    return FakeAnthropicServer(responder=ToyResponder(), stall_seconds=30.0, **faults)


def _run(cache: Path, **faults: object) -> tuple[RunResult, CachedLLM, tuple[LoggedRequest, ...]]:
    with _server(**faults) as fake, _open(cache, fake.url) as llm:
        result = run(toy_config(), _task(), llm)
        return result, llm, fake.requests


def _dump(events: tuple[object, ...]) -> str:
    return json.dumps([[type(e).__name__, unstructure(e)] for e in events], sort_keys=True)


def _body_key(entry: LoggedRequest) -> str:
    return json.dumps(entry.body, sort_keys=True)


def _successes(log: tuple[LoggedRequest, ...]) -> set[str]:
    return {_body_key(r) for r in log if r.fault is None}


def _valid_entries(cache: Path) -> int:
    store = CacheStore(cache)
    try:
        entries = list(store.entries())
    finally:
        store.close()
    assert not [e for _, e in entries if isinstance(e, CacheCorruptError)]
    return len(entries)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[RunResult, int]:
    """The fault-free run and the number of calls it paid."""
    result, llm, _ = _run(tmp_path_factory.mktemp("clean") / "cache")
    return result, llm.accounting().total().paid_calls


def test_transient_faults_leave_the_result_unchanged_and_are_never_cached(tmp_path, reference):
    cache = tmp_path / "cache"
    expected, _ = reference
    result, llm, log = _run(cache, fault_rate=0.1, fault_kinds=TRANSIENT, seed=7)

    assert _dump(result.events) == _dump(expected.events)
    assert result.final_text == expected.final_text
    kinds = Counter(r.fault for r in log if r.fault is not None)
    assert set(kinds) == set(TRANSIENT), f"every fault kind should occur: {kinds}"
    # One stored entry per distinct request that succeeded; nothing else reached the store.
    successes = _successes(log)
    assert _valid_entries(cache) == len(successes) == llm.accounting().total().paid_calls
    # Every failure was retried and counted, and no request was tried more than the bound.
    assert llm.retries == sum(kinds.values())
    attempts = Counter(_body_key(r) for r in log)
    assert max(attempts.values()) <= MAX_RETRIES + 1
    assert set(attempts) == successes


@pytest.mark.parametrize("fatal", [Fault.UNAUTHORIZED, Fault.SPEND_CAP])
def test_unrecoverable_fault_stops_the_run_and_a_clean_rerun_completes_it(tmp_path, reference,
                                                                           fatal):
    expected, expected_paid = reference
    cache = tmp_path / "cache"
    schedule = (None,) * 40 + (fatal,)
    with _server(faults=schedule) as fake, _open(cache, fake.url) as llm:
        with pytest.raises(LLMFatalError) as caught:
            run(toy_config(), _task(), llm)
        paid = llm.accounting().total().paid_calls
        log = fake.requests
    message = str(caught.value)
    assert "\n" not in message and fatal.value[:3] in message
    assert "not retried" in message
    # Calls in flight when the run stopped were answered by the server but abandoned by the
    # client: they are missing from the cache, never half-stored.
    stored = _valid_entries(cache)
    assert 0 < stored == paid <= len(_successes(log))

    result, llm, _ = _run(cache)
    assert _dump(result.events) == _dump(expected.events)
    assert result.final_text == expected.final_text
    # The rerun pays exactly for what the interrupted run had not stored.
    assert llm.accounting().total().paid_calls == expected_paid - stored


def test_fault_free_run_over_http_equals_the_in_process_run(reference):
    """The responder reproduces the toy models exactly, so the comparisons above are sound."""
    expected, _ = reference
    in_process = run(toy_config(), _task(), InProcessLLM())
    assert _dump(expected.events) == _dump(in_process.events)


def _cli_train(out: Path, url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ANTHROPIC_API_KEY": "k",
           "ANTHROPIC_BASE_URL": url, "COLUMNS": "400"}
    return subprocess.run(
        [sys.executable, "-m", "tests.support.cli", "train", "--task", "toy", "--limit", str(N_TRAIN),
         "--target", f"anthropic:{TARGET_MODEL}", "--optimizer", f"anthropic:{OPTIMIZER_MODEL}",
         "--out", str(out)],
        cwd=Path(__file__).resolve().parents[1], env=env, capture_output=True, text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_cli_run_stopped_by_a_401_keeps_its_events_and_resumes_identically(tmp_path):
    with _server() as fake:
        clean = _cli_train(tmp_path / "clean", fake.url)
    assert clean.returncode == 0, clean.stdout[-1500:] + clean.stderr[-1500:]

    out = tmp_path / "stopped"
    with _server(faults=(None,) * 60 + (Fault.UNAUTHORIZED,)) as fake:
        stopped = _cli_train(out, fake.url)
    assert stopped.returncode == 1
    failure = [ln for ln in stopped.stdout.splitlines() if "model call failed" in ln]
    assert len(failure) == 1 and "401" in failure[0] and "Traceback" not in stopped.stderr
    kept = (out / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert kept, "the rounds finished before the failure are on disk"
    assert not (out / "final_skill.txt").exists()

    with _server() as fake:
        resumed = _cli_train(out, fake.url)
    assert resumed.returncode == 0, resumed.stdout[-1500:] + resumed.stderr[-1500:]
    events = (out / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert events[: len(kept)] == kept
    assert events == (tmp_path / "clean" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert (out / "final_skill.txt").read_text() == (tmp_path / "clean" / "final_skill.txt").read_text()
