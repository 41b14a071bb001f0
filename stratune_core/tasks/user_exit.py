"""A user's scorer cannot end the process: `os._exit(0)` in it ended `train` at once with exit
code 0, as if the run had finished, and no handler can catch it. While a scorer runs, its
thread's `os._exit` raises `ProcessExitCalled` (a SystemExit) instead, which the task reports
as it reports `sys.exit`: one line naming the scorer and the sample. Every other thread, and
a process the scorer forks, keeps the real `os._exit`."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from typing import Any, NoReturn

_REAL_EXIT = os._exit
_inside = threading.local()  # .pid: the process whose scorer this thread is running
_install = threading.Lock()


class ProcessExitCalled(SystemExit):
    """`os._exit(code)` called by a user's scorer."""


def _guarded_exit(code: int) -> NoReturn:
    if getattr(_inside, "pid", None) == os.getpid():
        raise ProcessExitCalled(code)
    _REAL_EXIT(code)


def no_exit(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn`, whose calls of `os._exit` raise `ProcessExitCalled` in the calling thread."""
    with _install:
        os._exit = _guarded_exit

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        outer = getattr(_inside, "pid", None)
        _inside.pid = os.getpid()
        try:
            return fn(*args, **kwargs)
        finally:
            _inside.pid = outer

    return call
