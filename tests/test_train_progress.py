"""`stratune train`'s budget bar exists only on a terminal: elsewhere (a log file, a grid cell's
log) it would be invisible (transient) yet re-rendered by a refresh thread."""

from __future__ import annotations

import io
import threading

from rich.console import Console

from replay.run.progress import TrainProgress


def _refresh_threads() -> int:
    return sum(type(t).__name__ == "_RefreshThread" for t in threading.enumerate())


def test_a_console_that_is_not_a_terminal_gets_the_lines_and_no_bar_thread():
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=80)
    before = _refresh_threads()
    with TrainProgress(console):
        assert _refresh_threads() == before
        console.print("round 1")
    assert out.getvalue() == "round 1\n"


def test_a_terminal_gets_the_bar():
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=80)
    before = _refresh_threads()
    with TrainProgress(console):
        assert _refresh_threads() == before + 1
        console.print("round 1")
    assert "round" in out.getvalue() and "budget" in out.getvalue()
