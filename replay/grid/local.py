"""One machine: each cell runs in a thread of this process. Cells spend their time waiting on
model calls, so threads suffice; the shared gates are plain objects (llm_cache.gates)."""

from __future__ import annotations

import concurrent.futures as cf
import contextvars
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from replay.grid.cells import Cell
from replay.grid.execute import CellEnv, CellStatus, run_cell
from replay.grid.limits import GridLimits
from replay.grid.live import Board
from replay.rundir.serde import trace_converter


class LocalExecutor:
    def __init__(self, root: Path, env: CellEnv, limits: GridLimits, board: Board, *,
                 jobs: int, sink: Any = None) -> None:
        self.root = root
        self.env = env
        self.limits = limits
        self.board = board
        self.sink = sink
        self.pool = cf.ThreadPoolExecutor(max_workers=max(1, jobs),
                                          thread_name_prefix="stratune-cell")
        # Built once here: cells starting together would each build one (a first call of a
        # cached function is not serialised), with every hook cattrs then generates for it.
        trace_converter()

    def _run(self, cell: Cell) -> CellStatus:
        tracker = None
        if self.sink is not None:
            from replay.tracking.mlflow_runs import RunTracker

            tracker = RunTracker(self.sink, cell.path(self.root), run_name=cell.id,
                                 tags={f"grid.{k}": str(v) for k, v in cell.coordinates().items()})
        return run_cell(cell, self.root, self.env, gate=self.limits.gate(cell),
                        observers=(self.limits.stop,), reporter=self.board, tracker=tracker)

    def submit(self, cell: Cell) -> cf.Future[CellStatus]:
        # the caller's context (the model kinds and tasks `replay.models.specs.using` made active)
        # goes with the cell: a pool thread would otherwise start from an empty one
        return self.pool.submit(contextvars.copy_context().run, self._run, cell)

    def wait(self, handles: Sequence[Any], timeout: float) -> list[Any]:
        done, _ = cf.wait(handles, timeout=timeout, return_when=cf.FIRST_COMPLETED)
        return list(done)

    def result(self, handle: Any, cell: Cell) -> CellStatus:
        try:
            return handle.result()
        except Exception as exc:  # run_cell reports a cell's own failures; this is a bug
            return CellStatus(id=cell.id, state="failed", message=f"{type(exc).__name__}: {exc}")

    def interrupt(self, handles: Sequence[Any]) -> None:
        self.limits.stop.interrupt()

    def stop_reason(self) -> str | None:
        for path in self.limits.stop.stop_files:
            if path.exists():
                return f"{path} exists"
        if self.limits.stop.deadline is not None and self.limits.stop.timed_out():
            return f"--timeout {self.limits.stop.timeout_text}"
        if self.limits.cost is not None and self.limits.cost.exhausted:
            return "--max-cost reached"
        return None

    def close(self) -> None:
        self.pool.shutdown(wait=True)
