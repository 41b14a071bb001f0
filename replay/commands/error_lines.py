"""The one line a user reads for an error the shell can name: the same for the `stratune`
command (which then exits with code 2) and for the Python API (which raises it)."""

from __future__ import annotations

import sqlite3

from stratune_core.records.errors import StraTuneError


def error_line(exc: BaseException) -> str | None:
    """The message of an error caused by the user's input or files; None for any other."""
    if isinstance(exc, StraTuneError):
        return str(exc)
    if isinstance(exc, OSError):  # a file the user named cannot be read or written
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}"
    if isinstance(exc, sqlite3.DatabaseError):
        return f"a cache database cannot be read ({exc}); check --cache-dir"
    return None
