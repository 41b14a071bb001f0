"""The run directory, which is also the trace (docs/design.md, "Traces and serialization").

    manifest.json      config, task, model specs, seed, package versions, git revision, digest
    events.jsonl       one canonical event per line, appended, flushed and fsynced per round
    blobs/<id>.txt.gz  each skill text once, by content hash (gzip, mtime 0: reproducible bytes)
    cache/             the run's model-call cache
    usage.json         tokens and cost by call kind (written at the end of a run)
    final_skill.txt    the final skill

A crash leaves a readable prefix of events.jsonl (a torn last line is dropped when read). A
rerun of the same command rewrites the log from the start: `TraceWriter` checks each new line
against the line already on disk and only writes from the first difference on.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from pathlib import Path
from typing import Any

from attrs import frozen

from replay.rundir.serde import (
    Manifest,
    TraceError,
    check_blob,
    event_from_line,
    manifest_from_json,
    manifest_to_json,
)
from stratune_core.records.errors import StraTuneError
from stratune_core.state.events import Event

MANIFEST = "manifest.json"
EVENTS = "events.jsonl"
BLOBS = "blobs"
CACHE = "cache"
USAGE = "usage.json"
FINAL_SKILL = "final_skill.txt"
EVALUATION = "evaluation.json"
CELL_FILE = "grid_cell.json"  # a grid cell's coordinates, for `compare`
GRID_FILE = "grid.toml"  # the copy `stratune grid` keeps in its directory: a grid, not a run
SCORES = "scores.json"  # an evaluation directory's record (`replay/evaluate/directory.py`): not a run


@frozen
class RunDir:
    path: Path

    @classmethod
    def at(cls, path: str | os.PathLike[str]) -> RunDir:
        return cls(Path(path))

    @property
    def manifest(self) -> Path:
        return self.path / MANIFEST

    @property
    def events(self) -> Path:
        return self.path / EVENTS

    @property
    def blobs(self) -> Path:
        return self.path / BLOBS

    @property
    def cache(self) -> Path:
        return self.path / CACHE

    @property
    def usage(self) -> Path:
        return self.path / USAGE

    @property
    def final_skill(self) -> Path:
        return self.path / FINAL_SKILL

    @property
    def evaluation(self) -> Path:
        return self.path / EVALUATION

    def blob(self, blob_id: str) -> Path:
        return self.blobs / f"{blob_id}.txt.gz"

    def exists(self) -> bool:
        return self.manifest.is_file()

    def holds_grid(self) -> bool:
        return (self.path / GRID_FILE).is_file()

    def holds_evaluation(self) -> bool:
        return (self.path / SCORES).exists()

    def prepare(self) -> None:
        """Create the directory for `train`; a path that cannot hold a run is a one-line error."""
        if self.path.exists() and not self.path.is_dir():
            raise StraTuneError(f"--out {self.path}: is a file, not a directory; give a run "
                                "directory (it is created if missing)")
        if self.holds_grid():
            raise StraTuneError(f"--out {self.path}: is a grid directory ({GRID_FILE}); give "
                                "the run a directory of its own")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StraTuneError(f"--out {self.path}: cannot create the run directory "
                                f"({exc.strerror}); choose a writable place") from None

    def discard_unpaid(self) -> None:
        """Forget a run that never paid a call before another run starts here: its events and
        skill texts would otherwise mix with the new run's."""
        for path in (self.events, self.usage, self.evaluation, self.final_skill):
            path.unlink(missing_ok=True)
        if self.blobs.is_dir():
            for blob in self.blobs.iterdir():
                blob.unlink()
            self.blobs.rmdir()

    # ---- reading --------------------------------------------------------------------------

    def read_manifest(self) -> Manifest:
        if not self.manifest.is_file():
            raise TraceError(f"{self.manifest}: not found; is {self.path} a StraTune run directory?")
        return manifest_from_json(_read_text(self.manifest), where=str(self.manifest))

    def read_blob(self, blob_id: str) -> str:
        path = self.blob(blob_id)
        try:
            text = gzip.decompress(path.read_bytes()).decode("utf-8")
        except FileNotFoundError:
            raise TraceError(f"{path}: missing skill text; the trace is incomplete") from None
        except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:
            raise TraceError(f"{path}: unreadable ({exc}); the trace is damaged") from None
        return check_blob(blob_id, text, where=str(path))

    def read_lines(self) -> list[str]:
        """The complete lines of events.jsonl (a torn last line from a crash is left out)."""
        if not self.events.is_file():
            return []
        data = self.events.read_bytes()
        end = data.rfind(b"\n") + 1
        return [_utf8(line, self.events, i)
                for i, line in enumerate(data[:end].split(b"\n")[:-1], start=1)]

    def read_events(self, *, texts: bool = True) -> tuple[list[str], tuple[Event, ...]]:
        """The lines and their typed events; without `texts`, a `SkillAdded` carries an empty
        text and no blob is read (for readers of counts, which work without the blobs)."""
        lines = self.read_lines()
        read_blob = self.read_blob if texts else _no_text
        events = tuple(
            event_from_line(line, read_blob, where=f"{self.events}:{i}")
            for i, line in enumerate(lines, start=1)
        )
        return lines, events

    def read_json(self, path: Path) -> Any | None:
        if not path.is_file():
            return None
        try:
            return json.loads(_read_text(path))
        except json.JSONDecodeError as exc:
            raise TraceError(f"{path}: line {exc.lineno}: not JSON ({exc.msg})") from None

    # ---- writing --------------------------------------------------------------------------

    def write_manifest(self, manifest: Manifest) -> None:
        text = manifest_to_json(manifest)
        json.loads(text, parse_constant=_not_finite)  # NaN or Infinity would not be JSON
        _atomic_write(self.manifest, text.encode("utf-8") + b"\n")

    def write_blob(self, blob_id: str, text: str) -> None:
        path = self.blob(blob_id)
        if path.is_file():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(path, gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))

    def write_json(self, path: Path, data: Any) -> None:
        _atomic_write(path, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8"))

    def write_text(self, path: Path, text: str) -> None:
        _atomic_write(path, text.encode("utf-8"))


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:  # a full disk leaves the old file, never a half-written one
        tmp.unlink(missing_ok=True)
        raise naming(exc, path) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def naming(exc: OSError, path: Path) -> OSError:
    """The error with the file it concerns (a failed flush or close does not say)."""
    return exc if exc.filename else OSError(exc.errno, exc.strerror or str(exc), str(path))


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise TraceError(f"{path}:{line}: not UTF-8 (byte 0x{data[exc.start]:02x}); the file "
                         "is damaged") from None


def _no_text(_blob: str) -> str:
    return ""


def _utf8(line: bytes, path: Path, lineno: int) -> str:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TraceError(f"{path}:{lineno}: not UTF-8 (byte 0x{line[exc.start]:02x} at column "
                         f"{exc.start + 1}); the trace is damaged") from None


def _not_finite(name: str) -> Any:
    raise StraTuneError(f"manifest: a value is {name}; every number in a run's configuration "
                        "must be finite (check --config and the flags)")
