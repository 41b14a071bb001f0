"""One writer per directory: `stratune train` holds an exclusive lock on `<run dir>/.lock` for
the whole run, `stratune grid` on `<grid dir>/.lock` for the whole grid (each cell's run then
holds its own), `stratune evaluate --out DIR` on `DIR/.lock` while it scores and writes. The
OS releases it when the process ends, however it ends (a crash or SIGKILL leaves no stale
lock), so the same command can always resume. A second writer on the same directory, whatever
its command, is refused at once with the holder's command and pid. Readers (`replay`, `view`,
`compare`, `cache`) never take it and never write into the directory: `view --output` and
`compare --output` refuse a path inside one (`replay/rundir/output_path.py`).

`flock` rather than `fcntl` record locks: a record lock is dropped when *any* descriptor of the
file closes in the process, `flock` only when this one does.

The lock file is opened without following links and must be a regular file of its own (one
link): a `.lock` that is a symbolic link, a hard link to another file, a FIFO or a directory is
refused, since taking the lock truncates the file to write the holder's pid into it.
"""

from __future__ import annotations

import fcntl
import os
import stat
import time
from pathlib import Path

from stratune_core.records.errors import StraTuneError

LOCK_FILE = ".lock"
# what each command writes; else a run
_WRITES = {"grid": "grid", "evaluate": "evaluation", "evaluate --cache-dir": "directory's cache",
           "cache prune": "directory's cache"}


class RunLocked(StraTuneError):
    """Another process holds the run directory."""


class RunLock:
    def __init__(self, fd: int, path: Path) -> None:
        self._fd: int | None = fd
        self.path = path

    @classmethod
    def acquire(cls, directory: Path, command: str = "train", flag: str = "--out") -> RunLock:
        """`flag`: the option that named the directory (the refusals say to choose another)."""
        path = directory / LOCK_FILE
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as exc:
            if os.path.islink(path):
                raise _not_a_lock(path, "a symbolic link") from None
            if os.path.isdir(path):
                raise _not_a_lock(path, "a directory") from None
            raise StraTuneError(f"{flag} {directory}: cannot write the run there "
                                f"({exc.strerror}); choose a writable place") from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise _not_a_lock(path, "a special file (FIFO, socket or device)")
            if info.st_nlink != 1:
                raise _not_a_lock(path, f"a hard link ({info.st_nlink} names for one file)")
        except BaseException:
            os.close(fd)
            raise
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid, holder = _holder(fd)
            os.close(fd)
            raise RunLocked(
                f"{directory}: another `stratune {holder}` (pid {pid}) is writing this "
                f"{_WRITES.get(holder, 'run')}; "
                f"wait for it to finish, or choose another {flag}"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {command}\n".encode("ascii"), 0)
        except OSError:
            os.close(fd)  # a full disk: the caller reports it, and no lock is left held
            raise
        return cls(fd, path)

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.ftruncate(fd, 0)  # no stale pid for the next reader; the file itself stays
        except OSError:
            pass  # a full or read-only disk must not hide the run's own outcome
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _not_a_lock(path: Path, what: str) -> StraTuneError:
    return StraTuneError(f"{path}: is {what}, not the lock file stratune writes; nothing was "
                         "written through it: remove it and run the command again")


def _holder(fd: int, attempts: int = 20) -> tuple[str, str]:
    """The pid and command the holder wrote; it writes them right after locking, so wait
    briefly for them."""
    for _ in range(attempts):
        pid, _, command = os.pread(fd, 64, 0).decode("ascii", "replace").strip().partition(" ")
        if pid.isdigit():
            return pid, command or "train"
        time.sleep(0.01)
    return "unknown", "command"
