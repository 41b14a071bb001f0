"""The on-disk cache: diskcache holding checksummed JSON text, never pickles, never evicting.

Value layout: `<xxh3_64 hex of body>\\n<body JSON>`. The checksum catches torn or edited values;
the body carries the canonical request so a hit is verified against the request that asked.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import diskcache
import xxhash

from llm_cache.credentials import without_credentials
from llm_cache.errors import CacheCorruptError, LLMError
from llm_cache.key import canonical_json, differing_fields, key_of_canonical
from llm_cache.records import Response, ToolUseBlock, Usage

STORE_FORMAT = 1
DB_FILE = "cache.db"  # diskcache's SQLite file inside the cache directory


@attrs.frozen(kw_only=True)
class StoredEntry:
    canonical: str  # the canonical request JSON the key was computed from
    response: Response
    backend: str = ""
    created_at: float = 0.0
    latency_s: float = 0.0
    retries: int = 0

    def document(self) -> dict[str, Any]:
        return json.loads(self.canonical)


def response_to_dict(response: Response) -> dict[str, Any]:
    u = response.usage
    data: dict[str, Any] = {
        "text": response.text,
        "stop_reason": response.stop_reason,
        "model": response.model,
        "usage": [u.input_tokens, u.output_tokens, u.cache_write_tokens, u.cache_read_tokens],
    }
    if response.clamped_max_tokens is not None:  # absent otherwise: older entries stay identical
        data["clamped_max_tokens"] = response.clamped_max_tokens
    if response.tool_calls:  # likewise
        data["tool_calls"] = [[c.id, c.name, c.input] for c in response.tool_calls]
    return data


def response_from_dict(data: dict[str, Any], *, from_cache: bool) -> Response:
    i, o, w, r = data["usage"]
    return Response(
        text=data["text"],
        stop_reason=data["stop_reason"],
        model=data["model"],
        usage=Usage(input_tokens=i, output_tokens=o, cache_write_tokens=w, cache_read_tokens=r),
        clamped_max_tokens=data.get("clamped_max_tokens"),
        from_cache=from_cache,
        tool_calls=tuple(ToolUseBlock(id=i, name=n, input=a)
                         for i, n, a in data.get("tool_calls", ())),
    )


# Built once: `json.dumps` with options builds a new encoder per call (one per cache write).
_ENTRY = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def encode_entry(entry: StoredEntry) -> str:
    body = _ENTRY.encode(
        {
            "format": STORE_FORMAT,
            "canonical": entry.canonical,
            "response": response_to_dict(entry.response),
            "backend": without_credentials(entry.backend),  # never a URL's password
            "created_at": entry.created_at,
            "latency_s": entry.latency_s,
            "retries": entry.retries,
        }
    )
    return f"{xxhash.xxh3_64_hexdigest(body.encode('utf-8'))}\n{body}"


def decode_entry(key: str, value: object) -> StoredEntry:
    """Parse and verify one stored value; raise CacheCorruptError naming the key otherwise."""
    if not isinstance(value, str) or "\n" not in value:
        raise CacheCorruptError(f"cache entry {key} is not a StraTune record; prune it")
    checksum, body = value.split("\n", 1)
    if xxhash.xxh3_64_hexdigest(body.encode("utf-8")) != checksum:
        raise CacheCorruptError(
            f"cache entry {key} fails its checksum; run `stratune cache prune --corrupt`"
        )
    try:
        data = json.loads(body)
        return StoredEntry(
            canonical=data["canonical"],
            response=response_from_dict(data["response"], from_cache=True),
            backend=data.get("backend", ""),
            created_at=data.get("created_at", 0.0),
            latency_s=data.get("latency_s", 0.0),
            retries=data.get("retries", 0),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise CacheCorruptError(f"cache entry {key} cannot be decoded ({exc}); prune it") from exc


class EntryReading:
    """What both stores derive from `keys()` and `get()`."""

    def keys(self) -> Iterator[str]:
        raise NotImplementedError

    def get(self, key: str) -> StoredEntry | None:
        raise NotImplementedError

    def entries(self) -> Iterator[tuple[str, StoredEntry | CacheCorruptError]]:
        """Every entry, verified; a corrupt one is yielded as its error instead of raising."""
        for key in self.keys():
            try:
                entry = self.get(key)
            except CacheCorruptError as exc:
                yield key, exc
                continue
            if entry is None:
                continue
            if key_of_canonical(entry.canonical) != key:
                yield key, CacheCorruptError(f"cache entry {key} is stored under the wrong key")
                continue
            yield key, entry

    def nearest(self, document: dict[str, Any]) -> tuple[str, tuple[str, ...]] | None:
        """The stored request differing from `document` in the fewest key fields."""
        best: tuple[int, int, str, tuple[str, ...]] | None = None
        wanted = canonical_json(document)
        for key, entry in self.entries():
            if isinstance(entry, CacheCorruptError):
                continue
            other = entry.document()
            diff = differing_fields(document, other)
            # Tie-break by how much of the text differs, so a one-word skill edit wins over
            # an unrelated request that happens to differ in the same number of fields.
            closeness = -_common_prefix(wanted, entry.canonical)
            rank = (len(diff), closeness, key, diff)
            if best is None or rank < best:
                best = rank
        return None if best is None else (best[2], best[3])


class CacheStore(EntryReading):
    """Process- and thread-safe store (SQLite WAL underneath); safe for concurrent writers."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        check_header(self.directory)
        # eviction_policy="none": diskcache's default silently deletes old entries at 1 GiB,
        # which would destroy replay records.
        try:
            self._cache = diskcache.Cache(
                str(self.directory), eviction_policy="none", statistics=False, cull_limit=0
            )
        except sqlite3.DatabaseError as exc:
            raise damaged_database(self.directory, exc) from None

    @property
    def raw(self) -> diskcache.Cache:
        return self._cache

    def get(self, key: str) -> StoredEntry | None:
        value = self._cache.get(key)
        return None if value is None else decode_entry(key, value)

    def put(self, key: str, entry: StoredEntry) -> None:
        self._cache.set(key, encode_entry(entry))

    def delete(self, key: str) -> bool:
        return bool(self._cache.delete(key))

    def keys(self) -> Iterator[str]:
        for key in self._cache.iterkeys():
            if isinstance(key, str):
                yield key

    def __len__(self) -> int:
        return len(self._cache)

    def volume(self) -> int:
        return int(self._cache.volume())

    def close(self) -> None:
        self._cache.close()


def _common_prefix(a: str, b: str) -> int:
    return len(os.path.commonprefix((a, b)))


SQLITE_HEADER = b"SQLite format 3\x00"


def check_header(directory: Path) -> None:
    """SQLite silently rewrites a short file that is not a database as a new one: refuse it
    before SQLite opens it, so a damaged cache is reported, never replaced."""
    db = directory / DB_FILE
    try:
        with open(db, "rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return
    if head and head != SQLITE_HEADER:
        raise damaged_database(directory, ValueError("no SQLite header"))


class CacheNotFound(LLMError):
    """A cache directory to read does not exist or holds no cache."""


def damaged_database(directory: Path, exc: BaseException) -> CacheCorruptError:
    return CacheCorruptError(
        f"{directory / DB_FILE}: not a readable cache database ({exc}); the file is damaged: "
        "restore it from a copy, or move it away to start an empty cache (its calls are paid again)"
    )
