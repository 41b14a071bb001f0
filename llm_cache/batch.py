"""Misses of one `complete` call sent as Message Batches: half the price, the same answers.

For a backend with `batch=on`, `BatchWaves.run(jobs)`:

1. collects any batch the journal says was submitted for these cache keys and never collected
   (a run killed while its batch was processing), instead of paying for the requests again;
2. sends what is still missing as one batch (`custom_id` = the cache key), journals the batch
   id and its keys, polls with backoff (a progress line per check on `llm_cache.batch`), and
   matches the results to the requests by `custom_id`;
3. stores each `succeeded` answer under its key, exactly as a live answer; sends `errored`
   items again when the backend's live retry rules say so (at most `max_retries` times, with
   the live backoff for rate limits), `expired` ones at most `resubmits` times; a `canceled`
   item, a non-retryable error or an exhausted bound fails the call with `LLMFatalError` after
   every success of the batch is stored;
4. sends a wave smaller than `min_size` live (first waves and resubmissions alike).

Create, status and results calls go through the same retry layer as live calls.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from llm_cache.batch_journal import BatchJournal
from llm_cache.batch_records import (
    MAX_BATCH_REQUESTS,
    BatchBackend,
    BatchOptions,
    BatchStatus,
    ItemKind,
    ItemResult,
    batch_options,
)
from llm_cache.errors import LLMFatalError
from llm_cache.records import Request, Response
from llm_cache.retry import RetryDecision, RetryPolicy, call_with_retries

log = logging.getLogger(__name__)
T = TypeVar("T")
# The API's rule for custom_id (api/messages/batches/create); a cache key (32 hex) always fits.
CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
GROWTH = 1.5  # each wait between status checks is half again the last, up to poll_max


class Job(Protocol):
    @property
    def key(self) -> str: ...

    @property
    def request(self) -> Request: ...


Record = Callable[..., Response]  # CachedLLM._record(job, response, *, backend, latency, ...)
Live = Callable[[Sequence[Any]], Awaitable[Mapping[str, Response]]]


def _elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s" if minutes \
        else f"{secs}s"


class BatchWaves:
    """One backend's batch path, for the duration of one `complete` call."""

    def __init__(self, backend: BatchBackend, *,
                 journal: BatchJournal | None, policy: RetryPolicy, rng: random.Random,
                 sleep: Callable[[float], Awaitable[None]], record: Record,
                 spent: Callable[[Request, int], None], live: Live,
                 on_retry: Callable[[], None]) -> None:
        options = batch_options(backend)
        assert options is not None, f"{backend.name} does not take batches"
        self.backend = backend
        self.options: BatchOptions = options
        self.journal = journal
        self.policy = policy
        self.rng = rng
        self.sleep = sleep
        self.record = record
        self.spent = spent  # counts retries made here for a request answered elsewhere
        self.live = live
        self.on_retry = on_retry
        self.attempts: Counter[str] = Counter()  # errored results sent again, per key
        self.expired: Counter[str] = Counter()
        self.answers: dict[str, Response] = {}
        self.errors: list[str] = []
        self.waits: list[tuple[int, RetryDecision]] = []

    async def run(self, jobs: Sequence[Job]) -> dict[str, Response]:
        pending = {job.key: job for job in jobs}
        await self._resume(pending)
        while pending and not self.errors:
            wave = list(pending.values())
            if len(wave) < self.options.min_size:
                self.answers.update(await self.live(wave))
                for job in wave:
                    if self.attempts[job.key]:  # its earlier batch attempts were retries too
                        self.spent(job.request, self.attempts[job.key])
                pending.clear()
                break
            await self._backoff()
            ids = [await self._submit(wave[i:i + MAX_BATCH_REQUESTS])
                   for i in range(0, len(wave), MAX_BATCH_REQUESTS)]
            for batch_id, start in zip(ids, range(0, len(wave), MAX_BATCH_REQUESTS), strict=True):
                chunk = [job.key for job in wave[start:start + MAX_BATCH_REQUESTS]]
                await self._collect(batch_id, chunk, pending)
        if self.errors:
            for job in pending.values():
                self.spent(job.request, self.attempts[job.key])
            more = f" (and {len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
            raise LLMFatalError(f"{self.errors[0]}{more}; the batch's other answers are cached: "
                                "rerun the same command to continue")
        return self.answers

    # ---- the steps ------------------------------------------------------------------------

    async def _resume(self, pending: dict[str, Job]) -> None:
        if self.journal is None:
            return
        for entry in self.journal.open_batches(self.backend.name):
            mine = [key for key in entry.keys if key in pending]
            if not mine:
                continue
            log.info("batch %s: collecting %d requests submitted before the restart (journal "
                     "%s)", entry.batch_id, len(mine), self.journal.path)
            try:
                await self._collect(entry.batch_id, mine, pending)
            except LLMFatalError as exc:
                log.warning("batch %s cannot be collected (%s); its requests are sent again",
                            entry.batch_id, exc)
                self.journal.collected(entry.batch_id)

    async def _submit(self, wave: Sequence[Job]) -> str:
        items = []
        for job in wave:
            if not CUSTOM_ID.match(job.key):
                raise LLMFatalError(f"cache key {job.key!r} is not a valid batch custom_id")
            items.append((job.key, job.request))
        batch_id = await self._transport(lambda: self.backend.batch_create(items),
                                         f"creating a batch of {len(items)} requests")
        if self.journal is not None:
            # Before the first poll: a run killed from here on collects this batch on restart.
            self.journal.submitted(batch_id, self.backend.name, [key for key, _ in items])
        log.info("batch %s: %d %s requests to %s submitted (Batch API, 50%% price)", batch_id,
                 len(items), wave[0].request.kind.value, wave[0].request.model)
        return batch_id

    async def _collect(self, batch_id: str, keys: Sequence[str], pending: dict[str, Job]) -> None:
        started = time.monotonic()
        await self._poll(batch_id, len(keys), started)
        results = await self._transport(lambda: self.backend.batch_results(batch_id),
                                        f"results of batch {batch_id}")
        latency = time.monotonic() - started
        by_key = {item.custom_id: item for item in results}
        tally: Counter[str] = Counter()
        again: list[str] = []
        for key in keys:
            job = pending.get(key)
            if job is None:
                continue
            item = by_key.get(key)
            if item is None:
                self.errors.append(f"batch {batch_id}: request {key} is missing from its results")
                continue
            tally[item.kind.value] += 1
            reason = self._settle(batch_id, job, item, latency)
            if reason is None:
                del pending[key]
            elif reason:
                again.append(reason)
        if self.journal is not None:
            self.journal.collected(batch_id)
        log.info("batch %s: collected %s", batch_id,
                 ", ".join(f"{n} {k}" for k, n in sorted(tally.items())) or "nothing needed")
        if again and not self.errors:
            # One line per batch (like a live retry line), not one per request.
            log.warning("batch %s: %d requests go again in the next wave (%s)", batch_id,
                        len(again), again[0])

    def _settle(self, batch_id: str, job: Job, item: ItemResult, latency: float) -> str | None:
        """None: answered. A reason: it goes again. "": it failed (the error is noted)."""
        key = job.key
        what = (f"{self.backend.name} call to {job.request.model} ({job.request.kind.value}) "
                f"in batch {batch_id}")
        if item.kind is ItemKind.SUCCEEDED:
            assert item.response is not None
            self.record(job, item.response, backend=f"{self.backend.name} batch {batch_id}",
                        latency=latency, retries=self.attempts[key], batch=True)
            self.answers[key] = item.response
            return None
        if item.kind is ItemKind.CANCELED:
            self.errors.append(f"{what}: the batch was canceled (in the Console or through the "
                               "API)")
            return ""
        if item.kind is ItemKind.EXPIRED:
            self.expired[key] += 1
            if self.expired[key] > self.options.resubmits:
                self.errors.append(f"{what}: expired {self.expired[key]} times (the API did not "
                                   "process it within 24 hours); raise batch_resubmits or try "
                                   "later")
                return ""
            return f"expired, resubmission {self.expired[key]}/{self.options.resubmits}"
        decision = self.backend.classify_item(item.error)
        if not decision.retry:
            self.errors.append(f"{what}: {decision.reason} (not retried)")
            return ""
        if self.attempts[key] >= self.policy.max_retries:
            self.errors.append(f"{what}: gave up after {self.attempts[key]} retries, last "
                               f"error: {decision.reason}")
            return ""
        self.waits.append((self.attempts[key], decision))
        self.attempts[key] += 1
        self.on_retry()
        return f"retry {self.attempts[key]}/{self.policy.max_retries}: {decision.reason}"

    async def _backoff(self) -> None:
        """Before sending errored items again: the longest wait a live retry would make."""
        if not self.waits:
            return
        wait = max(self.policy.delay(attempt, decision, self.rng)
                   for attempt, decision in self.waits)
        self.waits.clear()
        if wait > 0:
            await self.sleep(wait)

    async def _poll(self, batch_id: str, n: int, started: float) -> BatchStatus:
        wait = self.options.poll
        while True:
            status = await self._transport(lambda: self.backend.batch_status(batch_id),
                                           f"status of batch {batch_id}")
            if status.ended:
                return status
            log.info("batch %s: %d requests, %s for %s; next check in %.3g s", batch_id, n,
                     status.describe(), _elapsed(time.monotonic() - started), wait)
            await self.sleep(wait)
            wait = min(wait * GROWTH, self.options.poll_max)

    async def _transport(self, call: Callable[[], Awaitable[T]], what: str) -> T:
        result, _ = await call_with_retries(
            call, classify=self.backend.classify, policy=self.policy, rng=self.rng,
            on_retry=lambda _: self.on_retry(), what=f"{self.backend.name}: {what}",
            sleep=self.sleep)
        return result


async def dispatch(jobs: Sequence[Any], backends: Mapping[Any, Any], *, live: Live,
                   waves: Callable[[Any], BatchWaves]) -> dict[str, Response]:
    """Group misses by backend: one `BatchWaves` per batch backend, everything else `live`."""
    batched: dict[int, list[Any]] = {}
    plain: list[Any] = []
    for job in jobs:
        backend = backends[job.request.role]
        (batched.setdefault(id(backend), []) if batch_options(backend) else plain).append(job)
    if not batched:
        return dict(await live(jobs))
    runs: list[Coroutine[Any, Any, Mapping[str, Response]]] = [
        waves(backends[group[0].request.role]).run(group) for group in batched.values()]
    if plain:
        runs.append(_as_coroutine(live(plain)))
    answers: dict[str, Response] = {}
    for part in await first_failure_cancels(runs):
        answers.update(part)
    return answers


async def _as_coroutine(awaitable: Awaitable[Mapping[str, Response]]) -> Mapping[str, Response]:
    return await awaitable


async def first_failure_cancels(coros: Sequence[Coroutine[Any, Any, T]]) -> list[T]:
    """Run concurrently; on the first exception cancel the rest and raise it. Cancelling the
    caller cancels them too (no task outlives the `complete` call that started it)."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        _, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        pending = {task for task in tasks if not task.done()}
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]
    return [task.result() for task in tasks]
