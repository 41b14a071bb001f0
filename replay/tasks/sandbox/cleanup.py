"""Reading back and deleting what a sandboxed program left, whatever shape it gave it.

Both run after every process of the run is dead, so nothing renames entries under them; they
still never follow a symlink the program planted, never recurse (a directory 100,000 levels
deep costs no stack) and never build long paths (each step is relative to an open directory).
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def read_regular(path: Path, cap: int) -> tuple[bytes | None, str]:
    """(at most `cap` bytes of `path`, '') for a regular file; (None, why) for anything else:
    missing, a symlink, a directory, a fifo, unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None, "no output file written"
    except OSError as exc:
        return None, f"output file unreadable ({exc.strerror or exc})"
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            return None, "output path is not a regular file"
        chunks: list[bytes] = []
        left = cap
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks), ""
    except OSError as exc:
        return None, f"output file unreadable ({exc.strerror or exc})"
    finally:
        os.close(fd)


def _clear(fd: int) -> list[str]:
    """Unlink every non-directory in the open directory `fd`; return its subdirectories."""
    subdirs: list[str] = []
    with contextlib.suppress(OSError), os.scandir(fd) as entries:
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                subdirs.append(entry.name)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(entry.name, dir_fd=fd)
    return subdirs


def _enter(name: str, parent: int) -> int:
    """Open subdirectory `name`, first giving it back the owner's rights the program may have
    removed (it is a directory by lstat, and nothing runs that could swap it)."""
    with contextlib.suppress(OSError):
        os.chmod(name, 0o700, dir_fd=parent)
    return os.open(name, _DIR_FLAGS, dir_fd=parent)


def remove_tree(base: Path) -> None:
    """Delete `base` and everything below it, iteratively, one open directory at a time."""
    with contextlib.suppress(OSError):
        os.chmod(base, 0o700, follow_symlinks=False)
    try:
        fd = os.open(base, _DIR_FLAGS)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(base)
        return
    pending = [_clear(fd)]  # per level: the subdirectories still to empty
    names: list[str] = []  # the way down from base, one name per level
    try:
        while True:
            if pending[-1]:
                name = pending[-1].pop()
                try:
                    child = _enter(name, fd)
                except OSError:
                    continue
                os.close(fd)
                fd = child
                names.append(name)
                pending.append(_clear(fd))
                continue
            pending.pop()
            if not names:
                break
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            with contextlib.suppress(OSError):
                os.rmdir(names.pop(), dir_fd=fd)
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.rmdir(base)
