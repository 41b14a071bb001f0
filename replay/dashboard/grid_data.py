"""A grid page's data: every cell with its state, test score, spend and cost; `compare`'s
tables as it builds them (`replay.compare.tables.build`, the best and second marked by rank);
the test score of each method or ablation over seeds; and each cell's run page.

Cells come from the grid file the grid directory keeps (`grid.toml`, expanded as `grid` does),
so cells not started yet are listed too, and from the run directories under it."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from replay.compare.model import Stat, Table, fmt_cell
from replay.compare.names import NAMES
from replay.compare.runs import Run, find_run_dirs, label_of, load_runs
from replay.compare.tables import build
from replay.rundir.lock import LOCK_FILE
from replay.rundir.trace import GRID_FILE
from replay.viewer.costs import totals
from stratune_core.records.errors import StraTuneError
from stratune_core.state.events import ExecutionsCharged, RunFinished, RunStarted, TargetExecuted


def grid_cell_ids(root: Path) -> list[str]:
    """The grid file's cells, in its order; none when the file cannot be read here (a task
    path relative to where the grid was started): the cells on disk are listed then."""
    from replay.grid.cells import expand
    from replay.grid.grid_file import load_grid

    try:
        return [cell.id for cell in expand(load_grid(root / GRID_FILE), root)]
    except (StraTuneError, OSError):
        return []


def cell_dirs(root: Path) -> dict[str, Path]:
    """Every run directory under the grid, by its id (its path under the grid)."""
    try:
        found = find_run_dirs([root])
    except StraTuneError:
        return {}
    return {str(path.relative_to(root)): path for path in found}


def _writing(path: Path) -> bool:
    """A cell's lock names a live process: its `train` is writing it. Read, never taken."""
    try:
        pid = (path / LOCK_FILE).read_text(encoding="ascii", errors="replace").split()[0]
        os.kill(int(pid), 0)
    except (OSError, IndexError, ValueError):
        return False
    return True


def _spent(run: Run) -> tuple[int, int]:
    spent, budget = 0, 0
    for e in run.events:
        if isinstance(e, ExecutionsCharged | TargetExecuted | RunFinished):
            spent = e.spent
        elif isinstance(e, RunStarted):
            budget = e.budget
    return spent, budget


def cell_row(cell_id: str, path: Path | None) -> tuple[dict[str, Any], Run | None]:
    row: dict[str, Any] = {"id": cell_id, "state": "pending", "method": None, "seed": None,
                           "dataset": None, "score": None, "initial": None, "spent": None,
                           "budget": None, "cost": None, "check": None, "error": None}
    if path is None or not (path / "manifest.json").is_file():
        return row, None
    try:
        run = load_runs([path])[0]
    except (StraTuneError, OSError) as exc:
        row.update(state="unreadable", error=" ".join(str(exc).split()))
        return row, None
    spent, budget = _spent(run)
    row.update(method=label_of(run, ()), seed=run.record.seed, dataset=run.dataset,
               score=run.score("final"), initial=run.score("initial"), spent=spent,
               budget=budget, check=run.check,
               cost=totals(run.usage["rows"])["paid"] if run.usage and run.usage.get("rows")
               else None)
    if run.finished:
        row["state"] = "done"
    else:
        row["state"] = "running" if _writing(path) else "unfinished"
    return row, run


def table_data(table: Table) -> dict[str, Any]:
    return {
        "id": table.id, "title": table.title, "notes": list(table.notes),
        "columns": [{"title": c.title, "numeric": c.kind != "text"} for c in table.columns],
        "rows": [{"group": row.group, "cells": [
            {"text": fmt_cell(value, column),
             "rank": value.rank if isinstance(value, Stat) else None}
            for value, column in zip(row.cells, table.columns, strict=True)]}
            for row in table.rows],
    }


def score_points(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The test score (0-100) of each cell that has one, by method, dataset and seed."""
    return [{"cell": r["id"], "method": r["method"], "dataset": r["dataset"], "seed": r["seed"],
             "score": r["score"]} for r in rows if r["score"] is not None]


def grid_sections(root: Path) -> tuple[dict[str, Any], dict[str, Path]]:
    """The grid's own sections, and the run directory of every cell that has one (their run
    pages are built apart, so that a live page rebuilds only the cells that changed)."""
    dirs = cell_dirs(root)
    ids = grid_cell_ids(root)
    ids += [cid for cid in dirs if cid not in ids]
    rows, runs = [], []
    for cid in ids:
        row, run = cell_row(cid, dirs.get(cid))
        rows.append(row)
        if run is not None:
            runs.append(run)
    try:
        tables = [table_data(t) for t in build(runs, NAMES)] if runs else []
        note = ""
    except StraTuneError as exc:
        tables, note = [], " ".join(str(exc).split())
    states = [r["state"] for r in rows]
    summary = ", ".join(f"{states.count(s)} {s}" for s in dict.fromkeys(states))
    level = "error" if "unreadable" in states else "ok" if set(states) == {"done"} else "warn"
    return {
        "status": {"level": level, "text": f"{len(rows)} cells: {summary}" if rows else
                   f"no cells yet in {root}"},
        "cells": rows, "tables": tables, "tables_note": note,
        "chart": score_points(rows),
    }, {cid: dirs[cid] for cid in ids if cid in dirs}
