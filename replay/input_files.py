"""Files the user points StraTune at, read so that none can hang or crash a command: only a
regular file is read (a FIFO would block the read forever, a device would never end), a
symlink loop is one line, and text nested deeper than a parser can recurse, a number longer than
Python converts, or a string escape that is no character (a lone surrogate) is one line."""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

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


# A JSON, YAML or TOML number of more digits than Python converts (sys.get_int_max_str_digits,
# 4300) raises this ValueError inside the parser; no field takes such a number.
_DIGITS_LIMIT = "integer string conversion"
_SURROGATE = re.compile("[\ud800-\udfff]")


def too_many_digits(exc: BaseException) -> bool:
    """Whether a parser's ValueError is Python's limit on the digits of an integer."""
    return isinstance(exc, ValueError) and _DIGITS_LIMIT in str(exc)


def number_too_long(where: str, error: type[StraTuneError] = StraTuneError) -> StraTuneError:
    return error(f"{where}: holds a number of more than {sys.get_int_max_str_digits()} "
                         "digits, which no field takes; fix the value")


def lone_surrogate(value: Any, at: str = "") -> str | None:
    """Where (`['input']`, `[2]`, `key 'x'`) a parsed JSON or YAML value holds a string with a
    lone surrogate (the escape `\\ud800`): such a string is not text, cannot be encoded as UTF-8,
    and would fail at the first model call or file write; None when there is none."""
    if isinstance(value, str):
        return at or "a value" if _SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and _SURROGATE.search(key):
                return f"key {key.encode('utf-8', 'backslashreplace').decode()!r}"
            if (found := lone_surrogate(item, f"{at}[{key!r}]")) is not None:
                return found
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            if (found := lone_surrogate(item, f"{at}[{index}]")) is not None:
                return found
    return None


def refuse_surrogates(value: Any, where: str,
                      error: type[StraTuneError] = StraTuneError) -> None:
    if (found := lone_surrogate(value)) is not None:
        raise error(f"{where}: {found} holds a lone surrogate (an escape such as "
                            "\\ud800 that is no character); fix or remove it")
