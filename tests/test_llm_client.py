"""CachedLLM with in-process backends: order, dedup, modes, corruption, retries, limits."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import threading

import pytest

from llm_cache.backends.base import BackendBase
from llm_cache.backends.function import FunctionBackend
from llm_cache.client import CachedLLM
from llm_cache.errors import CacheCorruptError, CacheMiss, LLMFatalError, TransientLLMError
from llm_cache.key import request_key
from llm_cache.records import CallKind, Message, Request, Response, Role, Usage
from llm_cache.retry import RetryDecision, RetryPolicy

FAST = RetryPolicy(max_retries=3, base_delay=0.0)


def ask(question: str, *, role: Role = Role.TARGET, draw: int = 0, system: str = "s",
        kind: CallKind = CallKind.TARGET_EXECUTION) -> Request:
    return Request(role=role, model="claude-haiku-4-5-20251001", system=system,
                   messages=(Message.user(question),), max_tokens=16, draw=draw, kind=kind)


class Scripted(BackendBase):
    """Answers `<role>:<question>#<draw>`; can fail the first `fail` calls per question."""

    def __init__(self, role: str = "target", fail: int = 0, fatal: bool = False) -> None:
        self.calls: list[Request] = []
        self.role = role
        self.fail = fail
        self.fatal = fatal
        self.failures: dict[str, int] = {}

    def __call__(self, request: Request) -> Response:
        self.calls.append(request)
        q = request.user_text()
        if self.failures.get(q, 0) < self.fail:
            self.failures[q] = self.failures.get(q, 0) + 1
            if self.fatal:
                raise RuntimeError("boom")
            raise TransientLLMError("flaky", retry_after=0.0)
        return Response(text=f"{self.role}:{q}#{request.draw}", model=request.model,
                        usage=Usage(input_tokens=10, output_tokens=2))


@pytest.fixture
def block_sockets(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a socket was opened")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def open_llm(tmp_path, fn=None, mode="live", **kw) -> CachedLLM:
    backends = {} if fn is None else {Role.TARGET: FunctionBackend(fn)}
    return CachedLLM.open(tmp_path / "cache", backends=backends, mode=mode,
                          retry_policy=kw.pop("retry_policy", FAST), **kw)


def test_responses_come_back_in_request_order_and_duplicates_are_sent_once(tmp_path):
    fn = Scripted()
    requests = [ask(q) for q in ("a", "b", "a", "c", "b", "a")]
    with open_llm(tmp_path, fn) as llm:
        out = llm.complete(requests)
        acc = llm.accounting().total()
    assert [r.text for r in out] == [f"target:{q}#0" for q in "abacba"]
    assert sorted(r.user_text() for r in fn.calls) == ["a", "b", "c"]
    assert (acc.paid_calls, acc.cache_hits) == (3, 3)


def test_second_call_is_served_from_cache_with_from_cache_flag(tmp_path):
    fn = Scripted()
    with open_llm(tmp_path, fn) as llm:
        first = llm.complete([ask("a")])
        second = llm.complete([ask("a")])
    assert len(fn.calls) == 1
    assert first == second and first[0].from_cache is False and second[0].from_cache is True


def test_draw_index_gives_distinct_entries(tmp_path):
    fn = Scripted()
    with open_llm(tmp_path, fn) as llm:
        out = llm.complete([ask("a", draw=d) for d in range(3)])
    assert [r.text for r in out] == ["target:a#0", "target:a#1", "target:a#2"]
    assert len(fn.calls) == 3


def test_roles_route_to_their_own_backends(tmp_path):
    target, optimizer = Scripted("target"), Scripted("optimizer")
    backends = {Role.TARGET: FunctionBackend(target), Role.OPTIMIZER: FunctionBackend(optimizer)}
    with CachedLLM.open(tmp_path / "c", backends=backends) as llm:
        out = llm.complete([ask("x"), ask("x", role=Role.OPTIMIZER)])
    assert [r.text for r in out] == ["target:x#0", "optimizer:x#0"]


def test_missing_backend_for_a_role_is_a_fatal_one_line_error(tmp_path):
    with open_llm(tmp_path, Scripted()) as llm, pytest.raises(LLMFatalError, match="optimizer"):
        llm.complete([ask("x", role=Role.OPTIMIZER)])


def test_replay_serves_hits_and_raises_cache_miss_with_nearest_without_sockets(
    tmp_path, block_sockets
):
    with open_llm(tmp_path, Scripted()) as llm:
        recorded = llm.complete([ask("What is 2+2?"), ask("Name a colour.")])
    with open_llm(tmp_path, mode="replay") as llm:
        assert llm.complete([ask("Name a colour.")]) == recorded[1:]
        with pytest.raises(CacheMiss) as info:
            llm.complete([ask("What is 2+2?", system="s2")])
    miss = info.value
    assert miss.nearest_key == request_key(ask("What is 2+2?"))
    assert miss.differing_fields == ("system",)
    assert "system" in str(miss) and "\n" not in str(miss)


def test_replay_miss_on_an_empty_cache_says_so(tmp_path):
    with open_llm(tmp_path, mode="replay") as llm, pytest.raises(CacheMiss, match="empty"):
        llm.complete([ask("a")])


def test_replay_never_calls_the_backend(tmp_path):
    fn = Scripted()
    with open_llm(tmp_path, fn, mode="replay") as llm, pytest.raises(CacheMiss):
        llm.complete([ask("a")])
    assert fn.calls == []


def test_off_mode_neither_reads_nor_writes(tmp_path):
    fn = Scripted()
    with open_llm(tmp_path, fn) as llm:
        llm.complete([ask("a")])
    with open_llm(tmp_path, fn, mode="off") as llm:
        out = llm.complete([ask("a"), ask("b")])
        assert len(llm.store) == 1
    assert [r.from_cache for r in out] == [False, False]
    assert len(fn.calls) == 3


def corrupt(tmp_path, request: Request) -> None:
    with open_llm(tmp_path, mode="replay") as llm:
        key = request_key(request)
        llm.store.raw.set(key, llm.store.raw.get(key).replace("target:", "tampered:"))


def test_corrupt_entry_is_a_miss_in_live_mode_and_gets_rewritten(tmp_path):
    fn = Scripted()
    with open_llm(tmp_path, fn) as llm:
        llm.complete([ask("a")])
    corrupt(tmp_path, ask("a"))
    with open_llm(tmp_path, fn) as llm:
        assert llm.complete([ask("a")])[0].text == "target:a#0"
        assert llm.corrupt_entries == 1
        assert llm.store.get(request_key(ask("a"))) is not None
    assert len(fn.calls) == 2


def test_corrupt_entry_is_an_error_in_replay_mode(tmp_path):
    with open_llm(tmp_path, Scripted()) as llm:
        llm.complete([ask("a")])
    corrupt(tmp_path, ask("a"))
    with open_llm(tmp_path, mode="replay") as llm, pytest.raises(CacheCorruptError):
        llm.complete([ask("a")])


def test_an_entry_holding_another_request_is_not_served(tmp_path):
    with open_llm(tmp_path, Scripted()) as llm:
        llm.complete([ask("a"), ask("b")])
        raw_b = llm.store.raw.get(request_key(ask("b")))
        llm.store.raw.set(request_key(ask("a")), raw_b)  # valid checksum, wrong request
    with open_llm(tmp_path, mode="replay") as llm, pytest.raises(CacheCorruptError):
        llm.complete([ask("a")])


def test_transient_failures_are_retried_counted_and_not_cached(tmp_path):
    fn = Scripted(fail=2)
    with open_llm(tmp_path, fn) as llm:
        out = llm.complete([ask("a")])
        acc = llm.accounting().total()
        assert llm.retries == 2 and acc.retries == 2
        assert len(llm.store) == 1
    assert out[0].text == "target:a#0" and len(fn.calls) == 3


def test_exhausted_retries_raise_fatal_and_cache_nothing_for_that_request(tmp_path):
    fn = Scripted(fail=10)
    with open_llm(tmp_path, fn, retry_policy=RetryPolicy(max_retries=2, base_delay=0)) as llm:
        with pytest.raises(LLMFatalError, match="gave up after 2 retries") as info:
            llm.complete([ask("a")])
        assert len(llm.store) == 0
        assert llm.accounting().total().retries == 2
    assert "\n" not in str(info.value)


def test_unrecoverable_error_is_not_retried_and_finished_calls_stay_cached(tmp_path):
    def fn(request: Request) -> Response:
        if request.user_text() == "bad":
            raise PermissionError("403 forbidden")
        return Response(text="ok")

    with open_llm(tmp_path, fn, concurrency=1) as llm:
        with pytest.raises(LLMFatalError, match="not retried"):
            llm.complete([ask("good"), ask("bad"), ask("later")])
        assert llm.retries == 0
        assert llm.store.get(request_key(ask("good"))) is not None
        assert llm.store.get(request_key(ask("bad"))) is None


def test_a_function_returning_a_non_response_is_fatal(tmp_path):
    with open_llm(tmp_path, lambda r: "text") as llm, pytest.raises(LLMFatalError, match="str"):
        llm.complete([ask("a")])


class CountingBackend(BackendBase):
    """An async backend that records the peak number of calls in flight."""

    name = "counting"

    def __init__(self, concurrency: int | None) -> None:
        self.concurrency = concurrency
        self.in_flight = 0
        self.peak = 0
        self.lock = threading.Lock()

    async def acomplete(self, request: Request) -> Response:
        with self.lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        await asyncio.sleep(0.01)
        with self.lock:
            self.in_flight -= 1
        return Response(text=request.user_text())

    def classify(self, exc: BaseException) -> RetryDecision:
        return RetryDecision.no(str(exc))

    async def aclose(self) -> None:
        return None


@pytest.mark.parametrize(("client_limit", "backend_limit", "expected"),
                         [(3, None, 3), (8, 2, 2), (1, 4, 1)])
def test_concurrency_limits_hold(tmp_path, client_limit, backend_limit, expected):
    backend = CountingBackend(backend_limit)
    with CachedLLM.open(tmp_path / "c", backends={Role.TARGET: backend},
                        concurrency=client_limit) as llm:
        out = llm.complete([ask(str(i)) for i in range(12)])
    assert [r.text for r in out] == [str(i) for i in range(12)]
    assert backend.peak == expected


def test_complete_works_across_many_calls_on_one_loop(tmp_path):
    backend = CountingBackend(None)
    with CachedLLM.open(tmp_path / "c", backends={Role.TARGET: backend}) as llm:
        for round_ in range(5):
            assert llm.complete([ask(f"{round_}-{i}") for i in range(3)])[2].text == f"{round_}-2"


def test_mode_is_validated():
    with pytest.raises(ValueError, match="record"):
        CachedLLM.open(None, backends={}, mode="record")
    with pytest.raises(ValueError, match="cache directory"):
        CachedLLM.open(None, backends={}, mode="live")


def test_every_failed_call_is_retrieved_so_none_is_reported_later(tmp_path, caplog):
    """Several calls in flight fail at once: one error is raised, and no other failed call is
    left for asyncio to report ("Task exception was never retrieved") when it is collected."""
    import gc

    backend = FunctionBackend(Scripted(fail=9, fatal=True), concurrency=None)
    llm = CachedLLM.open(tmp_path / "cache", backends={Role.TARGET: backend}, retry_policy=FAST)
    with caplog.at_level("ERROR", logger="asyncio"), llm:
        with pytest.raises(LLMFatalError, match="boom"):
            llm.complete([ask(q) for q in "abcdef"])
        gc.collect()
    assert "never retrieved" not in caplog.text and "destroyed" not in caplog.text


def test_calls_left_running_by_an_interrupt_are_cancelled_on_close(tmp_path, caplog):
    """Ctrl-C arrives while calls are in flight: closing the client cancels and awaits them,
    so none is destroyed pending."""
    import gc

    release = threading.Event()
    started = threading.Event()

    async def slow(request: Request) -> Response:
        started.set()
        while not release.is_set():
            await asyncio.sleep(0.01)
        return Response(text="late", model=request.model)

    backend = FunctionBackend(Scripted(), concurrency=None)
    backend.acomplete = slow  # type: ignore[method-assign]
    llm = CachedLLM.open(tmp_path / "cache", backends={Role.TARGET: backend}, retry_policy=FAST)
    # A real SIGINT: it wakes the main thread blocked on the result, as Ctrl-C does. A shell
    # that starts the suite in the background ignores SIGINT for it; the test would then wait
    # for ever, so it takes Python's own handler for its duration.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    interrupter = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
    try:
        with caplog.at_level("ERROR", logger="asyncio"):
            interrupter.start()
            with pytest.raises(KeyboardInterrupt):
                llm.complete([ask(q) for q in "abc"])
            assert started.is_set()
            llm.close()
            release.set()
            gc.collect()
    finally:
        release.set()
        signal.signal(signal.SIGINT, previous)
    assert "destroyed" not in caplog.text and "never retrieved" not in caplog.text
