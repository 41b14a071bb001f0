"""Where `view --output` and `compare --output` may write: not inside a directory another
command writes and checks (a run, an evaluation or a grid directory). A file put there would
be read as part of it (a run's seal names every file it covers) or lost when the directory is
rewritten; readers never write into them."""

from __future__ import annotations

from pathlib import Path

from replay.rundir.lock import LOCK_FILE
from replay.rundir.trace import CACHE, GRID_FILE, MANIFEST, SCORES
from stratune_core.records.errors import StraTuneError

# A directory is StraTune's when it holds one of these records beside its cache or its lock
# (a project's own manifest.json alone does not make it one).
_RECORDS = {MANIFEST: "a run directory", SCORES: "an evaluation directory",
            GRID_FILE: "a grid directory"}


def check_output(path: str | Path, flag: str = "--output") -> Path:
    """`path`, or a one-line error when it lies inside a run, evaluation or grid directory
    (links resolved)."""
    given = Path(path).expanduser()
    resolved = given.resolve()
    for directory in (resolved.parent, *resolved.parent.parents):
        what = kind_of(directory)
        if what is not None:
            raise StraTuneError(f"{flag} {given}: inside {what} ({directory}), which only the "
                                "command that made it writes; write the file somewhere else")
    return given


def kind_of(directory: Path) -> str | None:
    try:
        marked = (directory / LOCK_FILE).exists() or (directory / CACHE).is_dir()
    except OSError:
        return None
    if not marked:
        return None
    found = next((what for name, what in _RECORDS.items() if (directory / name).is_file()), None)
    if found is None and (directory / LOCK_FILE).is_file() and (directory / CACHE).is_dir():
        return "a directory stratune is writing"  # a run before its first manifest
    return found
