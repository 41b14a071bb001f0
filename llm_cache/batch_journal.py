"""The batch journal: which Message Batches were submitted and not yet collected.

One JSON line per event, appended and fsynced before the client starts polling:

    {"event": "submitted", "batch_id": "msgbatch_...", "backend": "anthropic:claude-haiku-4-5",
     "keys": ["<cache key>", ...]}
    {"event": "collected", "batch_id": "msgbatch_..."}

A run killed while a batch is processing leaves a `submitted` line without its `collected` line;
the same command then finds the batch by the cache keys it needs and collects its results
instead of paying for the requests again. A torn last line (a kill mid-write) is ignored.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from llm_cache.credentials import without_credentials

JOURNAL_NAME = "batches.jsonl"


@attrs.frozen(kw_only=True)
class OpenBatch:
    batch_id: str
    backend: str
    keys: tuple[str, ...]


class BatchJournal:
    """An append-only JSONL file; safe to share between the threads of one process."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def _lines(self) -> list[Mapping[str, Any]]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        out = []
        for line in text.splitlines():
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn line from a kill mid-append
            if isinstance(data, dict):
                out.append(data)
        return out

    def open_batches(self, backend: str) -> list[OpenBatch]:
        """Batches of this backend submitted and not collected, oldest first."""
        with self._lock:
            lines = self._lines()
        done = {d.get("batch_id") for d in lines if d.get("event") == "collected"}
        return [OpenBatch(batch_id=d["batch_id"], backend=d["backend"], keys=tuple(d["keys"]))
                for d in lines
                if d.get("event") == "submitted"
                and d.get("backend") in (backend, without_credentials(backend))
                and d.get("batch_id") not in done]

    def submitted(self, batch_id: str, backend: str, keys: Iterable[str]) -> None:
        self._append({"event": "submitted", "batch_id": batch_id,
                      "backend": without_credentials(backend),
                      "keys": list(keys)})

    def collected(self, batch_id: str) -> None:
        self._append({"event": "collected", "batch_id": batch_id})

    def _append(self, data: Mapping[str, Any]) -> None:
        line = json.dumps(data, separators=(",", ":")) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a+b") as f:
                if f.tell() > 0:
                    f.seek(-1, os.SEEK_END)
                    if f.read(1) != b"\n":  # end a torn line, or the new one would join it
                        line = "\n" + line
                f.write(line.encode("utf-8"))
                f.flush()
                os.fsync(f.fileno())
