"""What a dashboard reads: a run directory (`manifest.json`) or a grid directory (`grid.toml`),
its page's sections, and the title. Read as `view` and `compare` read, never locked, never
written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attrs import frozen

from replay.dashboard.grid_data import grid_sections
from replay.dashboard.run_data import run_sections
from replay.rundir.trace import GRID_FILE, MANIFEST
from stratune_core.records.errors import StraTuneError

RUN, GRID, WAITING = "run", "grid", "waiting"


class NotADashboard(StraTuneError):
    """The directory holds something else: neither a run nor a grid."""


def kind_of(path: Path) -> str:
    """RUN or GRID; WAITING for a directory that does not exist yet or is still empty (a run
    or grid about to start there); NotADashboard for anything else."""
    if (path / MANIFEST).is_file():
        return RUN
    if (path / GRID_FILE).is_file():
        return GRID
    if not path.exists() or (path.is_dir() and not any(path.iterdir())):
        return WAITING
    what = "a file" if not path.is_dir() else "a directory with neither manifest.json nor grid.toml"
    raise NotADashboard(f"{path}: is {what}; give a run directory (train --out) or a grid "
                        "directory (grid --out)")


def title_of(path: Path) -> str:
    return path.resolve().name or str(path)


@frozen
class Page:
    kind: str
    title: str
    sections: dict[str, Any]


def build_page(path: Path) -> Page:
    """The whole page of a finished or unfinished run or grid (`view --html`)."""
    kind = kind_of(path)
    if kind == WAITING:
        raise NotADashboard(f"{path}: not found, or holds no run yet; give a run directory "
                            "(train --out) or a grid directory (grid --out)")
    if kind == RUN:
        return Page(RUN, title_of(path), run_sections(path))
    sections, cells = grid_sections(path)
    for cell_id, cell_path in cells.items():
        sections[f"run:{cell_id}"] = run_sections(cell_path)
    return Page(GRID, title_of(path), sections)
