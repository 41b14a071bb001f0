"""A cache directory opened read-only (`stratune cache stats/explain`, `stratune replay`, and
any reader of a run another process is writing)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import diskcache

from llm_cache.errors import CacheCorruptError
from llm_cache.store import (
    DB_FILE,
    CacheNotFound,
    EntryReading,
    StoredEntry,
    check_header,
    damaged_database,
    decode_entry,
)


class CacheReader(EntryReading):
    """A cache directory opened read-only: no file is created or changed, so it is safe on a
    read-only disk, on a committed trace, and beside a `train` that is writing the cache.

    Reads diskcache's table directly: keys are stored as text, values as inline text or, when
    long, as a text file next to the database. Anything else is reported as not a record; a
    pickled value is never unpickled.
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        db = self.directory / DB_FILE
        if not self.directory.is_dir():
            raise CacheNotFound(f"{self.directory}: no such cache directory; check --cache-dir")
        if not db.is_file():
            raise CacheNotFound(f"{self.directory}: holds no cache ({DB_FILE} missing); "
                                    "check --cache-dir")
        check_header(self.directory)
        self._lock = threading.Lock()
        self._db = _open_read_only(db)
        self._disk = diskcache.Disk(str(self.directory))

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._db.execute(sql, args).fetchall()
            except sqlite3.DatabaseError as exc:
                raise damaged_database(self.directory, exc) from None

    def keys(self) -> Iterator[str]:
        for (key,) in self._query("SELECT key FROM Cache WHERE raw = 1 ORDER BY rowid"):
            if isinstance(key, str):
                yield key

    def get(self, key: str) -> StoredEntry | None:
        rows = self._query("SELECT mode, filename, value FROM Cache WHERE key = ? AND raw = 1",
                           (key,))
        if not rows:
            return None
        mode, filename, value = rows[0]
        if mode not in (diskcache.core.MODE_RAW, diskcache.core.MODE_TEXT):
            return decode_entry(key, None)  # raises: not a StraTune record
        try:
            text = self._disk.fetch(mode, filename, value, False)
        except (OSError, UnicodeDecodeError) as exc:
            raise CacheCorruptError(f"cache entry {key}: its value file cannot be read ({exc}); "
                                    "prune it") from None
        return decode_entry(key, text)

    def __len__(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM Cache")[0][0])

    def volume(self) -> int:
        pages = self._query("PRAGMA page_count")[0][0] * self._query("PRAGMA page_size")[0][0]
        files = self._query("SELECT COALESCE(SUM(size), 0) FROM Cache")[0][0]
        return int(pages + files)

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _open_read_only(db: Path) -> sqlite3.Connection:
    """Without a write-ahead log beside it the database file is complete, and `immutable=1`
    reads it without creating SQLite's -wal/-shm files (a committed trace stays untouched, a
    read-only disk works). With a log (a writer is active, or crashed) `mode=ro` reads through
    it; if even that cannot open (read-only directory), the file alone is the best there is."""
    tries = ("mode=ro", "mode=ro&immutable=1") if db.with_name(db.name + "-wal").exists() \
        else ("mode=ro&immutable=1",)
    last: sqlite3.Error = sqlite3.Error("cannot open")
    for flags in tries:
        try:
            connection = sqlite3.connect(f"file:{quote(str(db.resolve()))}?{flags}", uri=True,
                                         check_same_thread=False)
        except sqlite3.Error as exc:
            last = exc
            continue
        try:
            connection.execute("SELECT COUNT(*) FROM Cache").fetchone()
        except sqlite3.DatabaseError as exc:
            connection.close()
            if isinstance(exc, sqlite3.OperationalError) and "no such table" not in str(exc):
                last = exc
                continue
            raise damaged_database(db.parent, exc) from None
        return connection
    raise damaged_database(db.parent, last)
