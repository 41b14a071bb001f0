"""Where `train`, `evaluate` and `grid` may write their directory (`--out`), checked before
anything is written there:

- never a filesystem root or a home directory (a run's files would mix with the system's or
  the user's, and a later rerun or a discarded unpaid run deletes some of them);
- never inside another StraTune directory (`RUN/cache`, `RUN/sub`, an evaluation's folder):
  its files would be read as part of it, and its seal does not cover them. A grid's cells are
  the one exception: a run directory inside a grid whose `grid_cell.json` names its place;
- an existing directory holds only what that command writes (or an empty one): a run's files
  beside a project's own would be read, sealed and discarded with them.
"""

from __future__ import annotations

import json
import os
import pwd
from collections.abc import Iterable
from pathlib import Path

from llm_cache.batch_journal import JOURNAL_NAME
from replay.rundir.lock import LOCK_FILE
from replay.rundir.output_path import kind_of
from replay.rundir.trace import (
    BLOBS,
    CACHE,
    CELL_FILE,
    EVALUATION,
    EVENTS,
    FINAL_SKILL,
    GRID_FILE,
    MANIFEST,
    SCORES,
    USAGE,
)
from replay.skills.agent_skill import OUT_DIR as SKILL_DIR
from replay.stops.control import STOP_FILE
from stratune_core.records.errors import StraTuneError

GRID_MARKER = ".stratune-grid"  # replay.grid.ship.MARKER (rundir sits below grid)
CELL_LOG = "train.log"  # a grid cell's terminal output (`replay/grid/execute.py`)
TASK_FOLDER = "task"  # the rows of a task given to the Python API in memory (`api/data_task.py`)
# Another kind's record is not refused here: `train`, `evaluate` and `grid` each refuse a
# directory that holds another command's record with a line of their own.
RECORDS = frozenset({MANIFEST, SCORES, GRID_FILE})
ENTRIES = {
    "run": frozenset({EVENTS, BLOBS, CACHE, USAGE, FINAL_SKILL, EVALUATION, CELL_FILE,
                      JOURNAL_NAME, SKILL_DIR, CELL_LOG, LOCK_FILE, STOP_FILE, TASK_FOLDER}),
    "evaluation": frozenset({BLOBS, CACHE, LOCK_FILE, TASK_FOLDER}),
    # GRID_MARKER: the token a Ray grid writes so that a node can tell it sees the directory
    "grid": frozenset({LOCK_FILE, STOP_FILE, GRID_MARKER}),
}
_OWN_RECORD = {"run": frozenset({MANIFEST}), "evaluation": frozenset({SCORES}),
               "grid": frozenset({GRID_FILE})}
_OWNER = {"run": "a run's", "evaluation": "an evaluation's", "grid": "a grid's"}
TEMPORARY = ".tmp"  # an atomic write's file, left by a kill between its write and its rename


def check_out(path: str | Path, kind: str, *, folders: Iterable[str] = ()) -> None:
    """A one-line error when `path` cannot hold a `kind` directory (see the module); `folders`:
    the subdirectories a grid makes itself (its task names)."""
    given = Path(path).expanduser()
    resolved = given.resolve()
    if given.exists() and not given.is_dir():
        raise StraTuneError(f"--out {given}: is a file, not a directory; give a {kind} "
                            "directory (it is created if missing)")
    if resolved == resolved.parent:
        raise StraTuneError(f"--out {given}: is a filesystem root; give a directory of its own "
                            "for the " + kind + " (it is created if missing)")
    if resolved in _homes():
        raise StraTuneError(f"--out {given}: is a home directory; give a directory of its own "
                            "for the " + kind + ", e.g. " + str(given / "runs" / "first"))
    _not_inside_another(given, resolved, kind)
    if resolved.is_dir() and not _holds_another_record(resolved, kind):
        allowed = ENTRIES[kind] | RECORDS | frozenset(folders)
        foreign = sorted(entry for entry in os.listdir(resolved)
                         if entry not in allowed and entry.removesuffix(TEMPORARY) not in allowed)
        if foreign:
            shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more"
                                              if len(foreign) > 3 else "")
            raise StraTuneError(f"--out {given}: holds files that are not {_OWNER[kind]} "
                                f"({shown}); give an empty or new directory")


def _holds_another_record(directory: Path, kind: str) -> bool:
    """Another command's directory: that command refuses it with its own line (it names the
    record and says which command wrote it)."""
    return any((directory / name).exists() for name in RECORDS - _OWN_RECORD[kind])


def _not_inside_another(given: Path, resolved: Path, kind: str) -> None:
    for directory in resolved.parents:
        what = kind_of(directory)
        if what is None:
            continue
        if what == "a grid directory" and kind == "run" and _is_cell_of(resolved, directory):
            continue
        raise StraTuneError(f"--out {given}: inside {what} ({directory}); give the {kind} a "
                            "directory outside it")


def _is_cell_of(run: Path, grid: Path) -> bool:
    """The grid writes a cell's coordinates before its run: its id is its place in the grid."""
    try:
        data = json.loads((run / CELL_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("id") == run.relative_to(grid).as_posix()


def _homes() -> set[Path]:
    homes = {Path(entry.pw_dir) for entry in pwd.getpwall() if entry.pw_dir}
    if os.environ.get("HOME"):
        homes.add(Path(os.environ["HOME"]))
    resolved = set()
    for home in homes:
        try:
            resolved.add(home.resolve())
        except OSError:
            continue
    # a service account's "home" of / or a shared folder is not anyone's home directory
    return {home for home in resolved
            if home != home.parent and home not in (Path("/tmp"), Path("/var/tmp"))}
