"""What `stratune serve` knows of the directory it watches: the page's sections, rebuilt when
a file they come from changes, and for each section the generation it last changed in, so
that a page asking "what changed since generation N" gets only that.

It reads as `view` does (no lock taken, nothing written), so it can read a run while `train`
appends to it: a torn last line of events.jsonl is left for the next look. An error (a
damaged file, a directory that is not there yet) becomes the page's status line and one
line in the terminal; the sections drawn before it stay."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from replay.dashboard.executions import FailureReader
from replay.dashboard.grid_data import grid_sections
from replay.dashboard.run_data import run_sections
from replay.dashboard.source import GRID, RUN, WAITING, kind_of, title_of
from replay.rundir.trace import EVALUATION, EVENTS, GRID_FILE, MANIFEST, USAGE, RunDir
from stratune_core.records.errors import StraTuneError

WATCHED = (MANIFEST, EVENTS, USAGE, EVALUATION, "final_skill.txt", "grid_cell.json", ".lock",
           "skill")


def _stamp(path: Path) -> tuple[int, int]:
    try:
        info = path.stat()
    except OSError:
        return (-1, -1)
    return (info.st_size, info.st_mtime_ns)


def run_stamp(path: Path) -> tuple[Any, ...]:
    return tuple(_stamp(path / name) for name in WATCHED)


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def empty_run(status: dict[str, str]) -> dict[str, Any]:
    return {"status": status, "header": [], "trajectory": {"budget": 0, "points": [],
            "title": ""}, "rounds": [], "steps": [], "failures_note": "", "costs": None,
            "final": {"final": None, "initial": None, "comparisons": [], "test": None},
            "skill": None, "episodes": [], "episodes_note": ""}


class LiveSource:
    def __init__(self, path: Path, say: Callable[[str], None]) -> None:
        self.path = path
        self.say = say  # the terminal's line for each new state (waiting, error, finished)
        self.kind = WAITING
        self.generation = 0
        self.sections: dict[str, Any] = empty_run(self._waiting())
        self._changed: dict[str, int] = dict.fromkeys(self.sections, 0)
        self._digests: dict[str, str] = {}
        self._removed: dict[str, int] = {}
        self._stamps: dict[str, tuple[Any, ...]] = {}
        self._readers: dict[Path, FailureReader] = {}
        self._said = ""
        self._lock = threading.Lock()

    @property
    def title(self) -> str:
        return title_of(self.path)

    def _waiting(self) -> dict[str, str]:
        return {"level": "warn", "text": f"{self.path}: no run or grid there yet; waiting for "
                "`stratune train --out` or `stratune grid --out` to write it"}

    def _reader(self, path: Path) -> FailureReader | None:
        if path not in self._readers:
            try:
                manifest = RunDir.at(path).read_manifest()
            except StraTuneError:
                return None
            self._readers[path] = FailureReader(path, manifest)
        return self._readers[path]

    def _run(self, path: Path, key: str) -> dict[str, Any] | None:
        """A run's sections, or None when its files did not change since the last look."""
        stamp = run_stamp(path)
        if self._stamps.get(key) == stamp:
            return None
        sections = run_sections(path, self._reader(path))
        self._stamps[key] = stamp
        return sections

    def _build(self) -> dict[str, Any] | None:
        kind = kind_of(self.path)  # NotADashboard for a directory that became something else
        if kind != self.kind:
            self._stamps.clear()
        self.kind = kind
        if kind == WAITING:
            return empty_run(self._waiting())
        if kind == RUN:
            return self._run(self.path, "")
        stamp = (_stamp(self.path / GRID_FILE), *(
            (str(p), run_stamp(p.parent)) for p in sorted(self.path.rglob(MANIFEST))
            if "cache" not in p.relative_to(self.path).parts))
        if self._stamps.get("grid") == stamp:
            return None
        sections, cells = grid_sections(self.path)
        for cell_id, cell_path in cells.items():
            built = self._run(cell_path, cell_id)
            key = f"run:{cell_id}"
            sections[key] = built if built is not None else self.sections.get(key)
        self._stamps["grid"] = stamp
        return sections

    def refresh(self) -> None:
        with self._lock:
            try:
                built = self._build()
            except StraTuneError as exc:  # OSError and TraceError: a file read half-way
                status = {"level": "error", "text": " ".join(str(exc).split())}
                self._stamps.clear()  # look again next time
                built = {**self.sections, "status": status}
            except OSError as exc:
                status = {"level": "error", "text": f"{self.path}: cannot be read ({exc})"}
                self._stamps.clear()
                built = {**self.sections, "status": status}
            if built is not None:
                self._apply(built)
            self._report(self.sections.get("status", {}))

    def _apply(self, built: dict[str, Any]) -> None:
        changed = [k for k, v in built.items() if self._digests.get(k) != _digest(v)]
        gone = [k for k in self.sections if k not in built]
        if not changed and not gone:
            return
        self.generation += 1
        for key in changed:
            self._digests[key] = _digest(built[key])
            self._changed[key] = self.generation
        for key in gone:
            self._digests.pop(key, None)
            self._changed.pop(key, None)
            self._removed[key] = self.generation
        self.sections = built

    def _report(self, status: dict[str, str]) -> None:
        text = status.get("text", "")
        # one line per state, not per round: an unfinished run's line changes every round
        state = "unfinished" if text.startswith("run not finished") else text
        if state != self._said:
            self._said = state
            self.say(("error: " if status.get("level") == "error" else "") + text)

    def snapshot(self, since: int | None) -> dict[str, Any]:
        """The sections changed after generation `since` (all of them for None, or for a
        generation this server never reached: a page left open across a restart)."""
        with self._lock:
            fresh = since is None or since > self.generation
            return {
                "generation": self.generation, "kind": self.kind if self.kind != WAITING
                else RUN, "title": self.title,
                "sections": {k: v for k, v in self.sections.items()
                             if fresh or self._changed.get(k, 0) > since},
                "removed": [] if fresh else [k for k, g in self._removed.items() if g > since],
            }

    def close(self) -> None:
        for reader in self._readers.values():
            reader.close()


__all__ = ["GRID", "RUN", "LiveSource"]
