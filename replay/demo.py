"""`stratune demo`: replay the bundled recorded trace of the demo task offline, then show it.

The replay is a real StraTune run (the core recomputes every round) whose model calls are all
answered from the trace's cache in strict mode; sockets are blocked while it runs, so the demo
needs no API key, no network and no local model.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console

from replay import runner
from replay.show import load_run, show
from replay.viewer import summary
from stratune_core.errors import StraTuneError

TRACES = Path(__file__).resolve().parents[1] / "traces"
DEFAULT_TRACE = "demo"


class NetworkBlocked(OSError):
    pass


def find_trace(traces: Path = TRACES) -> Path:
    """`traces/demo` if present, else the first recorded trace in `traces/`."""
    preferred = traces / DEFAULT_TRACE
    if (preferred / "manifest.json").is_file():
        return preferred
    found = sorted(p.parent for p in traces.glob("*/manifest.json"))
    if not found:
        raise StraTuneError(f"{traces}: no recorded trace; record one with `stratune train "
                            "--task demo ... --out traces/demo` (see README) or pass --trace DIR")
    return found[0]


@contextmanager
def sockets_blocked() -> Iterator[None]:
    """Any attempt to open a network connection raises, so 'offline' is checked, not assumed."""

    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise NetworkBlocked("stratune demo runs offline: a network connection was attempted")

    saved = (socket.socket.connect, socket.socket.connect_ex, socket.create_connection,
             socket.getaddrinfo)
    socket.socket.connect = refuse  # type: ignore[method-assign]
    socket.socket.connect_ex = refuse  # type: ignore[method-assign]
    socket.create_connection = refuse  # type: ignore[assignment]
    socket.getaddrinfo = refuse  # type: ignore[assignment]
    try:
        yield
    finally:
        (socket.socket.connect, socket.socket.connect_ex, socket.create_connection,  # type: ignore[method-assign]
         socket.getaddrinfo) = saved


def demo(console: Console, trace: str | Path | None = None) -> int:
    path = Path(trace) if trace is not None else find_trace()
    console.print(f"replaying the recorded run in [bold]{path.name}[/] offline "
                  "(every model call from its cache)")
    with sockets_blocked():
        code = runner.replay(path, console)
    if code != runner.EXIT_OK:
        return code
    run = load_run(path)
    show(summary(run.view, run.manifest, run.usage, run.evaluation), console)
    return code
