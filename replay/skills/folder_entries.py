"""What an Agent Skills folder may hold besides SKILL.md: files, folders and symbolic links,
each named in UTF-8. Checked when the folder is read, before anything is paid: the learned
folder is a copy of it, written at the end of the run, and copying a FIFO blocks, a socket
cannot be copied, and a name that is not UTF-8 cannot be written to the run's seal."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from stratune_core.records.errors import ConfigError

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"))


def shown(path: Path | str) -> str:
    """`path` as text, a byte that is not UTF-8 written as `\\xff`."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def check_entries(folder: Path, error: type[ConfigError]) -> None:
    """Refuse the first entry under `folder` that is not a file, a folder or a link, or whose
    name is not UTF-8; symbolic links are not followed (they are copied as links)."""
    for root, dirs, files in os.walk(folder, onerror=_raise):
        for name in sorted(dirs + files):
            path = Path(root) / name
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                raise error(f"{shown(path)}: the name is not UTF-8; rename the file (a skill "
                            "folder's names are written to the run's seal)") from None
            mode = os.lstat(path).st_mode
            for test, kind in _KINDS:
                if test(mode):
                    raise error(f"{shown(path)}: is {kind}; an Agent Skills folder holds "
                                "files and folders only, remove it")


def _raise(exc: OSError) -> None:
    raise exc
