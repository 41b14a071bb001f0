"""Files the user points StraTune at, read so that none can hang or crash a command: only a
regular file is read (a FIFO would block the read forever, a device would never end), a
symlink loop is one line, and text nested deeper than a parser can recurse is one line."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from stratune_core.records.errors import StraTuneError


def read_regular(path: Path, what: str) -> bytes:
    """The bytes of `path`, which must be a regular file (followed through links)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise _unreadable(path, what, exc) from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise StraTuneError(f"{what} {path}: is a directory; give a file")
        if not stat.S_ISREG(mode):
            raise StraTuneError(f"{what} {path}: is not a regular file (a FIFO, socket or "
                                "device); give a file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    except OSError as exc:
        raise _unreadable(path, what, exc) from None
    finally:
        os.close(fd)


def _unreadable(path: Path, what: str, exc: OSError) -> StraTuneError:
    if isinstance(exc, FileNotFoundError):
        return StraTuneError(f"{what} {path}: not found")
    return StraTuneError(f"{what} {path}: cannot be read ({exc.strerror or exc})")


def resolved(path: Path, what: str) -> Path:
    """`path` made absolute through its links; a symlink loop is one line."""
    try:
        return path.resolve()
    except (RuntimeError, OSError) as exc:  # Python < 3.13 raises RuntimeError on a loop
        raise StraTuneError(f"{what} {path}: cannot be resolved ({exc}); fix the link") from None


def too_deep(where: str) -> StraTuneError:
    """A file nested deeper than Python's parsers recurse (RecursionError): one line."""
    return StraTuneError(f"{where}: nested too deeply to read (hundreds of levels of [ or {{); "
                         "flatten it")
