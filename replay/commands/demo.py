"""`stratune demo`: replay the bundled recorded trace of the demo task offline, then show it.

The replay is a real StraTune run (the core recomputes every round) whose model calls are all
answered from the trace's cache in strict mode; sockets are blocked while it runs, so the demo
needs no API key, no network and no local model.

`stratune demo --live` trains instead, on the same bundled task with the embedded local model
(SmolLM2-135M through llama.cpp) as target and optimizer, so the main job runs before your eyes
without an API key. It installs what it needs first (see `replay.models.local_model`), checks with one
call in a subprocess that llama.cpp works on this CPU, writes its run to `runs/demo-live` (never
into `traces/`), and scores the initial and the final skill on the task's test samples.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console

from replay.models import local_model
from replay.run import runner
from replay.run.options import RunOptions
from replay.rundir.out_dir import check_out
from replay.rundir.serde import TaskSpec
from replay.viewer import RunView, summary
from replay.viewer.show import load_run, show
from stratune_core.records.errors import StraTuneError

TRACES = Path(__file__).resolve().parents[2] / "traces"
DEFAULT_TRACE = "demo"
LIVE_OUT = Path("runs/demo-live")
# The docs' local-model example (docs/models.md): 24 training samples, budget 144 executions,
# 2 rounds, SmolLM2 as both models, otherwise the default configuration.
LIVE_LIMIT = 24
LIVE_BUDGET = 144
LIVE_ROUNDS = 2
LIVE_TARGET = "llamacpp:{gguf}?threads=2&mode=reset&n_ctx=2048"
LIVE_OPTIMIZER = "llamacpp:{gguf}?threads=2&mode=reset&n_ctx=4096"


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
                            "--task demo ... --out traces/demo` (see docs/demo-trace.md) or "
                            "pass --trace DIR")
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


def live_options(gguf: Path) -> RunOptions:
    return RunOptions(
        task=TaskSpec(spec="demo", limit=LIVE_LIMIT),
        target=LIVE_TARGET.format(gguf=gguf), optimizer=LIVE_OPTIMIZER.format(gguf=gguf),
        seed=0, overrides=(("budget", LIVE_BUDGET), ("max_rounds", LIVE_ROUNDS)),
    )


def demo_live(console: Console, out: str | Path | None = None, *,
              install: local_model.Runner | None = None) -> int:
    """Train on the bundled task with the embedded local model, showing progress, then the run."""
    path = Path(out) if out is not None else LIVE_OUT
    if path.resolve().is_relative_to(TRACES.resolve()):
        raise StraTuneError(f"--out {path}: traces/ holds recorded traces only; choose another "
                            "directory")
    check_out(path, "run")  # before the install and the build, which take minutes
    gguf = local_model.ensure(console) if install is None else \
        local_model.ensure(console, run=install)
    console.print(f"training live on the bundled demo task ({LIVE_LIMIT} training samples, "
                  f"budget {LIVE_BUDGET}, {LIVE_ROUNDS} rounds) with SmolLM2-135M as target and "
                  f"optimizer, into {path}")
    console.print("a 135M model learns little: expect unusable optimizer replies and rejected "
                  "candidates; the run shows the machinery, not a good skill")
    if (path / "manifest.json").is_file():
        console.print(f"{path} holds this run already: its recorded calls are answered from its "
                      "cache (delete the folder to watch it from scratch)")
    code = runner.train(live_options(gguf), path, console, concurrency=1, test_split="test")
    if code != runner.EXIT_OK:
        return code
    run = load_run(path)
    show(summary(run.view, run.manifest, run.usage, run.evaluation), console)
    console.print(learned_line(run.view, run.evaluation))
    return code


def learned_line(view: RunView, evaluation: Mapping[str, Any] | None) -> str:
    """The test score before and after training, in one line."""
    scores = (evaluation or {}).get("scores", {})
    initial = view.started.initial_skill_id if view.started else None
    final = view.finished.final_id if view.finished else None
    if initial not in scores or final not in scores:
        return "no test score: the run has no evaluation"
    size = (evaluation or {}).get("n", "")
    on = f" on {size} test samples" if size else " on the test samples"
    if final == initial:
        return (f"test score{on}: {scores[initial]:.3f} before and after (no candidate was "
                "accepted: the final skill is the initial one)")
    change = scores[final] - scores[initial]
    return (f"test score{on}: {scores[initial]:.3f} before, {scores[final]:.3f} after training "
            f"({change:+.3f})")
