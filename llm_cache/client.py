"""`CachedLLM`: the object the core calls. Cache first, then backends, with one retry layer.

Hits are served synchronously before any event loop is touched, so a fully cached replay costs
only disk reads. Misses run on one long-lived background event loop (clients such as
`AsyncAnthropic` keep connection pools bound to their loop, so the loop must outlive a call;
`event_loop.py`).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from llm_cache.accounting import Accounting, Ledger
from llm_cache.backends import backend_for
from llm_cache.backends.base import Backend, BackendBase
from llm_cache.batch import BatchWaves, dispatch
from llm_cache.batch_journal import JOURNAL_NAME, BatchJournal
from llm_cache.errors import CacheCorruptError, LLMFatalError
from llm_cache.event_loop import BackgroundLoop
from llm_cache.gates import CallGate
from llm_cache.key import canonical_request, key_of_canonical
from llm_cache.misses import cache_miss, recheck
from llm_cache.modes import Mode
from llm_cache.prices import PriceTable
from llm_cache.reader import CacheReader
from llm_cache.records import Request, Response, Role
from llm_cache.retry import RetryDecision, RetryPolicy, call_with_retries
from llm_cache.store import CacheStore, StoredEntry

__all__ = ["CachedLLM", "backend_for"]


@attrs.frozen
class _Job:
    key: str
    canonical: str
    request: Request


class CachedLLM:
    def __init__(
        self,
        store: CacheStore | CacheReader | None,
        backends: Mapping[Role, Backend],
        *,
        mode: Mode = Mode.LIVE,
        concurrency: int = 8,
        retry_policy: RetryPolicy | None = None,
        prices: PriceTable | None = None,
        seed: int = 0,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        batch_journal: str | Path | None = None,
        gate: CallGate | None = None,
    ) -> None:
        if mode is not Mode.OFF and store is None:
            raise ValueError(f"cache mode {mode.value!r} needs a cache directory")
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.store = store
        self.mode = mode
        self.concurrency = concurrency
        self._backends = dict(backends)
        for backend in {id(b): b for b in self._backends.values()}.values():
            if isinstance(backend, BackendBase):
                backend.bind_cache(None if store is None else store.directory, mode)
        self._policy = retry_policy or RetryPolicy()
        self._ledger = Ledger(prices)
        self._rng = random.Random(seed)  # backoff jitter only; never affects outputs
        self._sleep = sleep or asyncio.sleep
        self._gate = gate  # shared limits and stop controls (llm_cache.gates); None: no gate
        self._loop = BackgroundLoop()
        self.corrupt_entries = 0
        self.retries = 0
        # Batches submitted, not yet collected (`batch=on` crash safety); default: by the cache.
        if batch_journal is None and store is not None:
            batch_journal = store.directory / JOURNAL_NAME
        self.batch_journal = None if batch_journal is None else BatchJournal(batch_journal)

    @classmethod
    def open(
        cls,
        cache_dir: str | Path | None,
        *,
        backends: Mapping[Role, Backend],
        mode: str | Mode = "live",
        concurrency: int = 8,
        max_retries: int = 6,
        retry_policy: RetryPolicy | None = None,
        prices: PriceTable | None = None,
        seed: int = 0,
        batch_journal: str | Path | None = None,
        gate: CallGate | None = None,
    ) -> CachedLLM:
        store = None if cache_dir is None else CacheStore(cache_dir)
        policy = retry_policy or RetryPolicy(max_retries=max_retries)
        return cls(store, backends, mode=Mode.parse(mode), concurrency=concurrency,
                   retry_policy=policy, prices=prices, seed=seed, batch_journal=batch_journal,
                   gate=gate)

    # ---- the synchronous door -------------------------------------------------------------

    def complete(self, requests: Sequence[Request]) -> tuple[Response, ...]:
        """Responses in request order; identical requests are sent once."""
        requests = tuple(requests)
        out: list[Response | None] = [None] * len(requests)
        waiting: dict[str, list[int]] = {}
        jobs: list[_Job] = []
        hits: list[tuple[Request, Response]] = []
        for i, request in enumerate(requests):
            canonical = canonical_request(request)
            key = key_of_canonical(canonical)
            if key in waiting:
                waiting[key].append(i)
                continue
            if self.mode is not Mode.OFF:
                cached = self._lookup(key, canonical)
                if cached is not None:
                    out[i] = cached
                    hits.append((request, cached))
                    continue
            waiting[key] = [i]
            jobs.append(_Job(key, canonical, request))
        self._ledger.hits(hits)
        if self.mode is Mode.REPLAY and hits:
            self._loop.run(recheck(hits, self._backends))
        if jobs:
            if self.mode is Mode.REPLAY:
                job = jobs[0]
                raise cache_miss(self.store, job.request, job.key, job.canonical,
                                 missing=len(jobs), total=len(requests))
            self._check_backends(jobs)
            # Misses for a backend with `batch=on` go out as Message Batches; the rest live.
            answers = self._loop.run(dispatch(jobs, self._backends, live=self._complete_all,
                                         waves=self._batch_waves))
            for job in jobs:
                first, *duplicates = waiting[job.key]
                response = answers[job.key]
                out[first] = response
                for j in duplicates:
                    out[j] = response
                    self._ledger.hit(requests[j], response)
        return tuple(r for r in out if r is not None)

    def accounting(self) -> Accounting:
        return self._ledger.snapshot()

    def close(self) -> None:
        self._loop.close(list({id(b): b for b in self._backends.values()}.values()), self.store)
        if self.store is not None:
            self.store.close()

    def __enter__(self) -> CachedLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- cache side -----------------------------------------------------------------------

    def _lookup(self, key: str, canonical: str) -> Response | None:
        assert self.store is not None
        try:
            entry = self.store.get(key)
            if entry is not None and entry.canonical != canonical:
                raise CacheCorruptError(
                    f"cache entry {key} holds a different request (hash collision or edited "
                    "entry); run `stratune cache prune --corrupt`"
                )
        except CacheCorruptError:
            if self.mode is Mode.REPLAY:
                raise
            # Live mode: recompute and overwrite; a damaged record must not stop a paid run.
            self.corrupt_entries += 1
            return None
        return None if entry is None else entry.response

    # ---- backend side ---------------------------------------------------------------------

    def _check_backends(self, jobs: Sequence[_Job]) -> None:
        for job in jobs:
            if job.request.role not in self._backends:
                raise LLMFatalError(
                    f"no backend for role {job.request.role.value!r}; pass "
                    f"backends={{Role.{job.request.role.name}: ...}} to CachedLLM.open"
                )

    async def _complete_all(self, jobs: Sequence[_Job]) -> dict[str, Response]:
        limit = asyncio.Semaphore(self.concurrency)
        per_backend: dict[int, asyncio.Semaphore] = {}
        for backend in self._backends.values():
            if backend.concurrency is not None:
                per_backend[id(backend)] = asyncio.Semaphore(backend.concurrency)
        answers: dict[str, Response] = {}

        async def one(job: _Job) -> None:
            backend = self._backends[job.request.role]
            own = per_backend.get(id(backend))
            async with limit:
                if own is None:
                    answers[job.key] = await self._call(backend, job, len(jobs))
                else:
                    async with own:
                        answers[job.key] = await self._call(backend, job, len(jobs))

        tasks = [asyncio.ensure_future(one(job)) for job in jobs]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        finally:  # also when this coroutine itself is cancelled
            for task in tasks:
                task.cancel()
            # Every task's outcome is retrieved here, failed ones included: an exception
            # left unretrieved is printed as a traceback when the task is collected.
            outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        failures = [o for o in outcomes if isinstance(o, BaseException)
                    and not isinstance(o, asyncio.CancelledError)]
        if failures:
            raise failures[0]
        return answers

    def _policy_for(self, backend: Any) -> RetryPolicy:
        """The client's retry policy, with the backend spec's `?max_retries=` when given."""
        retries = backend.max_retries
        if retries is None:
            return self._policy
        return attrs.evolve(self._policy, max_retries=retries)

    def _batch_waves(self, backend: Any) -> BatchWaves:
        return BatchWaves(backend, journal=self.batch_journal, policy=self._policy_for(backend),
                          rng=self._rng, sleep=self._sleep, record=self._record,
                          spent=self._ledger.failed_retries, live=self._complete_all,
                          on_retry=self._count_retry)

    def _count_retry(self) -> None:
        self.retries += 1

    async def _call(self, backend: Backend, job: _Job, width: int) -> Response:
        if self._gate is None:
            return await self._call_backend(backend, job)
        # may wait (narrower waves first, llm_cache.gates.SharedLimit), or refuse (StopRequested)
        ticket = await self._gate.enter(job.request, width)
        response: Response | None = None
        try:
            response = await self._call_backend(backend, job)
            return response
        finally:
            await self._gate.leave(ticket, response)

    async def _call_backend(self, backend: Backend, job: _Job) -> Response:
        request = job.request
        spent = 0

        def on_retry(_: RetryDecision) -> None:
            nonlocal spent
            spent += 1
            self.retries += 1

        started = time.monotonic()
        try:
            response, retries = await call_with_retries(
                lambda: backend.acomplete(request),
                classify=backend.classify,
                policy=self._policy_for(backend),
                rng=self._rng,
                on_retry=on_retry,
                what=f"{backend.name} call to {request.model} ({request.kind.value})",
                sleep=self._sleep,
            )
        except BaseException:
            self._ledger.failed_retries(request, spent)
            raise
        return self._record(job, response, backend=backend.name,
                            latency=time.monotonic() - started, retries=retries)

    def _record(self, job: _Job, response: Response, *, backend: str, latency: float,
                retries: int, batch: bool = False) -> Response:
        response = attrs.evolve(response, from_cache=False)
        if self.mode is Mode.LIVE:
            assert isinstance(self.store, CacheStore)
            # Written only after a successful call: an error can never become a cached answer.
            # A batch answer goes under the same key as a live one: the cache does not care.
            self.store.put(job.key, StoredEntry(
                canonical=job.canonical, response=response, backend=backend,
                created_at=time.time(), latency_s=latency, retries=retries,
            ))
        self._ledger.paid(job.request, response, retries, batch=batch, seconds=latency)
        return response
