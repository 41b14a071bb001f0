"""Whether a run directory already holds this run: a rerun of the same command resumes it,
a different run is refused (unless it never paid a call), and the cache's write-ahead log is
folded into cache.db so that the file alone holds every call."""

from __future__ import annotations

import sqlite3

from llm_cache.batch_journal import JOURNAL_NAME
from llm_cache.reader import CacheReader
from llm_cache.store import CacheNotFound
from replay.rundir.serde import Manifest, check_prompt_version
from replay.rundir.trace import RunDir
from stratune_core.records.errors import StraTuneError


def previous_run(run_dir: RunDir, manifest: Manifest) -> Manifest | None:
    """The run already in the directory, if it is this one. A different run is refused unless
    it never paid a call (no cached call, no batch submitted): a command that failed at its
    first call, such as one naming a model that cannot answer, does not block the corrected
    command; what it wrote is discarded."""
    if not run_dir.exists():
        return None
    recorded = run_dir.read_manifest()
    wanted = manifest.run_identity()
    held = recorded.run_identity()
    differing = sorted(k for k in wanted if held.get(k) != wanted[k])
    if not differing:
        return recorded
    journal = run_dir.path / JOURNAL_NAME
    if cached_calls(run_dir) == 0 and not (journal.is_file() and journal.stat().st_size):
        run_dir.discard_unpaid()
        return None
    check_prompt_version(recorded, where=str(run_dir.manifest))
    extra = ""
    if "config" in differing:
        fields = sorted(k for k in wanted["config"] if held["config"].get(k) != wanted["config"][k])
        extra = f" (config fields: {', '.join(fields)})"
    raise StraTuneError(
        f"{run_dir.path} holds a different run: {', '.join(differing)} differ{extra}; "
        "repeat the original command to resume it, or choose another --out"
    )


def cached_calls(run_dir: RunDir) -> int:
    try:
        reader = CacheReader(run_dir.cache)
    except CacheNotFound:
        return 0
    try:
        return len(reader)
    finally:
        reader.close()


def checkpoint(run_dir: RunDir) -> None:
    """Fold SQLite's write-ahead log into cache.db, so the file alone holds every call (a trace
    committed without its -wal file must still replay)."""
    db = run_dir.cache / "cache.db"
    if not db.is_file():
        return
    connection = sqlite3.connect(db)
    try:
        connection.execute("PRAGMA walcheckpoint(TRUNCATE)")
    finally:
        connection.close()
