"""The one long-lived event loop, on its own thread, that `CachedLLM`'s misses run on.

Clients such as `AsyncAnthropic` keep connection pools bound to the loop they were first used
on, so the loop must outlive a single `complete` call; it starts on the first miss (a fully
cached replay never starts it) and stops when the client closes.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from llm_cache.backends.base import Backend
from llm_cache.reader import CacheReader
from llm_cache.store import CacheStore

T = TypeVar("T")


class BackgroundLoop:
    def __init__(self, name: str = "stratune-llm") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the loop (started on first use) and wait for its result."""
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=self._loop.run_forever,
                                                name=self._name, daemon=True)
                self._thread.start()
            loop = self._loop
        future = asyncio.run_coroutine_threadsafe(coro, loop)
        try:
            return future.result()
        except BaseException:
            # Ctrl-C (or SIGTERM raised as it) lands here while calls are in flight: cancel
            # them in the loop, so none is left pending when the loop closes.
            future.cancel()
            raise

    def close(self, backends: Sequence[Backend], store: CacheStore | CacheReader | None) -> None:
        """Cancel what is left, close the backends' clients and the store's connection of the
        loop's thread, then stop the loop. Nothing happens if the loop never started."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        asyncio.run_coroutine_threadsafe(_cancel_pending(), loop).result()
        asyncio.run_coroutine_threadsafe(_close_all(backends), loop).result()
        if store is not None:
            # SQLite connections are per thread: writes happened on the loop thread, and
            # leaving its connection open leaves -wal/-shm files beside a recorded trace.
            asyncio.run_coroutine_threadsafe(_close_store(store), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


async def _close_store(store: CacheStore | CacheReader) -> None:
    store.close()


async def _cancel_pending() -> None:
    """Cancel and await whatever an interrupted `complete` left running in the loop."""
    current = asyncio.current_task()
    pending = [t for t in asyncio.all_tasks() if t is not current]
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)


async def _close_all(backends: Sequence[Backend]) -> None:
    for backend in backends:
        await backend.aclose()
