"""The grid's live table: one row per cell (state, round, spent/B, accepted, test score), the
running and troubled cells first when the terminal is too short for all of them."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from replay.grid.execute import STATES, CellStatus

STYLE = {"running": "bold cyan", "done": "green", "skipped": "green", "stopped": "yellow",
         "failed": "bold red", "blocked": "red", "waiting": "dim", "pending": "dim"}
ORDER = {"running": 0, "failed": 1, "stopped": 2, "blocked": 3, "waiting": 4, "pending": 5,
         "done": 6, "skipped": 7}


class Board:
    """Every cell's latest status; written by cells (any thread), read by the driver."""

    def __init__(self, cell_ids: Iterable[str]) -> None:
        self._lock = threading.Lock()
        self._status = {cid: CellStatus(id=cid) for cid in cell_ids}

    def report(self, status: CellStatus) -> None:
        with self._lock:
            self._status[status.id] = status

    def get(self, cell_id: str) -> CellStatus:
        with self._lock:
            return self._status[cell_id]

    def snapshot(self) -> tuple[CellStatus, ...]:
        with self._lock:
            return tuple(self._status.values())


def counts(statuses: Sequence[CellStatus]) -> str:
    tally = Counter(s.state for s in statuses)
    return ", ".join(f"{tally[state]} {state}" for state in STATES if tally[state])


def _score(status: CellStatus) -> str:
    return "—" if status.test_score is None else f"{100 * status.test_score:.2f}"


def table(statuses: Sequence[CellStatus], *, title: str = "grid", max_rows: int | None = None
          ) -> RenderableType:
    shown = list(statuses)
    hidden = 0
    if max_rows is not None and len(shown) > max_rows:
        shown = sorted(shown, key=lambda s: ORDER.get(s.state, 9))[:max_rows]
        hidden = len(statuses) - len(shown)
    t = Table(title=f"{title}: {len(statuses)} cells ({counts(statuses)})", title_justify="left",
              expand=False, pad_edge=False)
    t.add_column("cell", overflow="fold")
    t.add_column("state")
    t.add_column("round", justify="right")
    t.add_column("spent/B", justify="right")
    t.add_column("accepted", justify="right")
    t.add_column("test score", justify="right")
    for s in shown:
        spent = f"{s.spent}/{s.budget}" if s.budget else "—"
        t.add_row(s.id, Text(s.state, style=STYLE.get(s.state, "")),
                  str(s.round) if s.round else "—", spent, str(s.accepted), _score(s))
    parts: list[RenderableType] = [t]
    if hidden:
        parts.append(Text(f"… {hidden} more cells (done or waiting)", style="dim"))
    return Group(*parts)


def problems(statuses: Sequence[CellStatus]) -> list[str]:
    """One line per cell that did not complete, with the reason its run gave."""
    return [f"{s.id}: {s.state}" + (f" — {s.message}" if s.message else "")
            for s in statuses if s.state in ("stopped", "failed", "blocked")]
