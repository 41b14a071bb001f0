"""A cache directory inside a run, an evaluation or a grid directory belongs to it: a command
that writes to it from outside (`evaluate --cache-dir RUN/cache`, `cache prune`) takes that
directory's lock for as long as it writes, so it is refused at once while the run trains, and
a run started meanwhile is refused in turn. Any other place inside such a directory is refused:
files put there are not the run's, and nothing it checks covers them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from replay.rundir.lock import RunLock
from replay.rundir.output_path import kind_of
from replay.rundir.trace import CACHE
from stratune_core.records.errors import StraTuneError


def owner(cache_dir: str | Path, flag: str = "--cache-dir") -> Path | None:
    """The StraTune directory whose cache `cache_dir` is, None when it lies in none; a one-line
    error when it lies inside one without being its cache."""
    resolved = Path(cache_dir).expanduser().resolve()
    for directory in (resolved, *resolved.parents):
        if directory != resolved and _stratune_dir(directory):
            if resolved == directory / CACHE:
                return directory
            raise StraTuneError(f"{flag} {cache_dir}: inside a directory stratune writes "
                                f"({directory}) but not its cache; give {directory / CACHE} "
                                "or a cache directory outside it")
    return None


def _stratune_dir(directory: Path) -> bool:
    return kind_of(directory) is not None


@contextlib.contextmanager
def owner_locked(cache_dir: str | Path, command: str,
                 flag: str = "--cache-dir") -> Iterator[None]:
    """Hold the lock of the directory that owns `cache_dir` (nothing when none does)."""
    directory = owner(cache_dir, flag)
    if directory is None:
        yield
        return
    with RunLock.acquire(directory, command, flag):
        yield
