"""What strict replay says when the cache cannot answer a request, and the one kind of request
it recomputes although the cache answers it: a pure tool's call, compared with its recording."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from llm_cache.backends.base import Backend, BackendBase
from llm_cache.errors import CacheMiss, LLMFatalError
from llm_cache.reader import CacheReader
from llm_cache.records import Request, Response, Role
from llm_cache.store import CacheStore

RECORD_HINT = ("record it by running live: the same `stratune train` command, or "
               "`CachedLLM.open(..., mode='live')`")


class ReplayMismatch(LLMFatalError):
    """A pure tool, recomputed on replay, answered otherwise than its recorded call."""


def cache_miss(store: CacheStore | CacheReader | None, request: Request, key: str,
               canonical: str, *, missing: int, total: int) -> CacheMiss:
    """The miss of the first of `missing` requests, naming the nearest stored request and the
    fields in which it differs."""
    assert store is not None
    nearest = store.nearest(json.loads(canonical))
    where = f"cache {store.directory}"
    head = (f"replay: {missing} of {total} requests are not in {where}; first: "
            f"{request.kind.value} call to {request.model} (key {key})")
    if nearest is None:
        return CacheMiss(f"{head}; the cache is empty; {RECORD_HINT}",
                         key=key, nearest_key=None, differing_fields=())
    nearest_key, fields = nearest
    return CacheMiss(
        f"{head}; nearest stored request {nearest_key} differs in: "
        f"{', '.join(fields) or 'nothing (corrupt?)'}; {RECORD_HINT}",
        key=key, nearest_key=nearest_key, differing_fields=fields,
    )


async def recheck(hits: Sequence[tuple[Request, Response]],
                  backends: Mapping[Role, Backend]) -> None:
    """Recompute every answered request its backend declares checkable and compare."""
    for request, recorded in hits:
        backend = backends.get(request.role)
        if not isinstance(backend, BackendBase) or not backend.rechecks(request):
            continue
        again = await backend.recheck(request, recorded)
        if again is None:
            continue
        if (again.text, again.stop_reason) != (recorded.text, recorded.stop_reason):
            said = " ".join(recorded.text.split())[:80]
            now = " ".join(again.text.split())[:80]
            raise ReplayMismatch(
                f"replay: {request.model}: the recorded call {request.user_text()[:80]!r} "
                f"answered {said!r} and now answers {now!r}; a tool declared pure changed or is "
                "not pure (fix it, or drop pure=True), or a harness episode ran otherwise: "
                "record the run again")
