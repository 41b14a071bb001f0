"""The grid driver: starts cells as their sources finish, keeps the live table current, and
stops starting new cells on a STOP file, a timeout, an exhausted cost cap or Ctrl-C.

It is the same for both executors: threads on this machine (`local.py`) and Ray tasks on a
cluster (`ray_executor.py`); an executor only starts a cell, waits, and interrupts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from attrs import evolve

from replay.grid.cells import Cell
from replay.grid.execute import CellStatus
from replay.grid.live import Board


class Executor(Protocol):
    def submit(self, cell: Cell) -> Any: ...

    def wait(self, handles: Sequence[Any], timeout: float) -> list[Any]:
        """The handles among `handles` whose cells have ended (possibly none)."""
        ...

    def result(self, handle: Any, cell: Cell) -> CellStatus: ...

    def interrupt(self, handles: Sequence[Any]) -> None:
        """Ctrl-C: make the running cells stop as soon as they can (resumable)."""
        ...

    def stop_reason(self) -> str | None:
        """A reason to start no more cells (STOP file, timeout, cost cap), else None."""
        ...


def drive(cells: Sequence[Cell], executor: Executor, board: Board, *, jobs: int,
          refresh: Callable[[], None] = lambda: None, poll: float = 0.25
          ) -> tuple[dict[str, CellStatus], str | None]:
    """Run every cell (at most `jobs` at once); returns each cell's status and why the grid
    stopped early (None if it did not)."""
    results: dict[str, CellStatus] = {}
    pending = list(cells)
    running: dict[Any, Cell] = {}
    stopping: str | None = None
    while True:
        if stopping is None:
            _start_ready(pending, running, results, executor, board, jobs)
        if not running:
            break
        try:
            for handle in executor.wait(list(running), poll):
                cell = running.pop(handle)
                results[cell.id] = executor.result(handle, cell)
                board.report(results[cell.id])
            if stopping is None:
                stopping = executor.stop_reason()
            refresh()
        except KeyboardInterrupt:
            if stopping == "interrupted":
                raise  # a second Ctrl-C: leave now
            stopping = "interrupted"
            executor.interrupt(list(running))
    for cell in pending:
        results[cell.id] = evolve(board.get(cell.id), state="pending",
                                  message=f"not started ({stopping})" if stopping else "")
        board.report(results[cell.id])
    refresh()
    return results, stopping


def _start_ready(pending: list[Cell], running: dict[Any, Cell], results: dict[str, CellStatus],
                 executor: Executor, board: Board, jobs: int) -> None:
    for cell in list(pending):
        if len(running) >= jobs:
            return
        source = cell.depends_on
        if source is not None and source not in results:
            board.report(evolve(board.get(cell.id), state="waiting",
                                message=f"waits for {source}"))
            continue
        pending.remove(cell)
        if source is not None and not results[source].complete:
            results[cell.id] = CellStatus(
                id=cell.id, state="blocked",
                message=f"replays {source}, which is {results[source].state}; rerun the grid "
                        "once it is complete")
            board.report(results[cell.id])
            continue
        running[executor.submit(cell)] = cell
