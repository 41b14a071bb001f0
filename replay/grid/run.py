"""`run_grid`: expand a grid file into cells, check them, run them locally or on Ray, and say
how it ended. The Python entry point behind `stratune grid` (tests and scripted examples pass
their own `CellEnv` to build models and tasks in process)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from attrs import field, frozen
from rich.console import Console
from rich.live import Live

from replay.grid.cells import Cell, check, expand, finished
from replay.grid.driver import drive
from replay.grid.execute import CellEnv, CellStatus, SpecEnv, fitted_options, load_cell_task
from replay.grid.limits import GridLimits, grid_cost_cap
from replay.grid.live import Board, counts, problems, table
from replay.grid.spec import GridError, GridSpec
from replay.models.redact import public_text
from replay.rundir.lock import RunLock
from replay.rundir.out_dir import check_out
from replay.rundir.trace import GRID_FILE, RunDir
from replay.stops.control import StopControl
from stratune_core.records.errors import StraTuneError

EXIT_OK, EXIT_FAILED, EXIT_STOPPED, EXIT_INTERRUPTED = 0, 1, 3, 130
MAX_JOBS = 256


@frozen(kw_only=True)
class GridOptions:
    jobs: int | None = None  # cells at once (default: all, or 1 with an in-process model)
    max_connections: Mapping[str, int] = field(factory=dict)  # over the grid file's
    max_cost: float | None = None
    timeout: str | None = None
    mlflow: str | None = None
    mlflow_experiment: str = "stratune"
    ray: str | None = None  # None: this machine; "auto", an address, or "attached"
    ray_cpus: float = 1.0  # CPUs Ray reserves per cell
    ship: bool = False  # Ray: copy run directories to and from the nodes
    ray_pass_env: bool = False  # Ray: this shell's provider credentials through runtime_env


@frozen(kw_only=True)
class GridResult:
    root: Path
    statuses: tuple[CellStatus, ...]
    stopped: str | None
    code: int


def default_jobs(cells: tuple[Cell, ...]) -> int:
    local_model = any(spec.startswith("llamacpp:") for c in cells
                      for spec in (c.options.target, c.options.optimizer))
    return 1 if local_model else min(len(cells), MAX_JOBS)


def plan_lines(cells: tuple[Cell, ...], root: Path) -> list[str]:
    lines = []
    for cell in cells:
        path = cell.path(root)
        state = ("finished" if finished(path, cell.test_eval)
                 else "partial" if (path / "manifest.json").exists() else "new")
        after = f" (after {cell.depends_on})" if cell.depends_on else ""
        lines.append(f"{state:8} {cell.id}{after}")
    return lines


def checked_cells(spec: GridSpec, root: Path, env: CellEnv) -> tuple[Cell, ...]:
    """The grid's cells, each checked as `train` would check it; a dry run and a run check
    through this one function, so they never disagree about a cell on disk."""
    cells = expand(spec, root)
    check(spec, cells, root, lambda cell: load_cell_task(env, cell),
          lambda cell: fitted_options(env, cell))
    return cells


def run_grid(spec: GridSpec, out: str | Path, console: Console, *, env: CellEnv | None = None,
             options: GridOptions | None = None,
             on_ready: Callable[[], None] | None = None) -> GridResult:
    """`on_ready` runs once the grid's input is accepted, before its directory is made."""
    env = env or SpecEnv()
    options = options or GridOptions()
    root = Path(out).resolve()
    cells = checked_cells(spec, root, env)
    sink = None
    if options.mlflow is not None:
        from replay.stops.flags import mlflow_sink

        sink = mlflow_sink(options.mlflow, options.mlflow_experiment)
    if RunDir.at(root).exists():
        raise GridError(f"--out {root}: holds a training run (manifest.json); give the grid a "
                        "directory of its own")
    try:
        check_out(out, "grid", folders=(task.name for task in spec.tasks))
    except StraTuneError as exc:
        raise GridError(str(exc)) from None
    if on_ready is not None:
        on_ready()
    root.mkdir(parents=True, exist_ok=True)
    with RunLock.acquire(root, "grid"):
        if spec.path.is_file() and spec.path.resolve() != (root / GRID_FILE).resolve():
            # what the cells were made from, its model specs without secrets as in manifests
            specs = [s for pair in spec.pairs for s in (pair.target, pair.optimizer)]
            copy = public_text(spec.path.read_text(encoding="utf-8"), specs)
            RunDir.at(root).write_text(root / GRID_FILE, copy)
        return _run_locked(spec, root, cells, console, env, options, sink, Path(out))


def _run_locked(spec: GridSpec, root: Path, cells: tuple[Cell, ...], console: Console,
                env: CellEnv, options: GridOptions, sink: object, out: Path) -> GridResult:
    stop = StopControl.for_run(root, timeout=options.timeout)
    limits = GridLimits({**dict(spec.max_connections), **options.max_connections}, stop,
                        grid_cost_cap(options.max_cost, cells, root))
    board = Board(c.id for c in cells)
    jobs = options.jobs or default_jobs(cells)
    executor = _executor(options, root, env, limits, board, jobs, sink, cells)
    name = spec.path.name
    try:
        if console.is_terminal:
            with Live(table(board.snapshot(), title=name), console=console, transient=True,
                      refresh_per_second=4) as live:
                rows = max(5, console.size.height - 8)
                results, stopped = drive(cells, executor, board, jobs=jobs,
                                         refresh=lambda: live.update(
                                             table(board.snapshot(), title=name, max_rows=rows)))
        else:  # the live table is transient: elsewhere it would be rendered and never shown
            results, stopped = drive(cells, executor, board, jobs=jobs)
    finally:
        executor.close()
    statuses = tuple(results[c.id] for c in cells)
    console.print(table(statuses, title=name))
    return GridResult(root=root, statuses=statuses, stopped=stopped,
                      code=_report(statuses, stopped, out, spec, console))


def _executor(options: GridOptions, root: Path, env: CellEnv, limits: GridLimits, board: Board,
              jobs: int, sink: object, cells: tuple[Cell, ...] = ()) -> Any:
    if options.ray is None:
        from replay.grid.local import LocalExecutor

        return LocalExecutor(root, env, limits, board, jobs=jobs, sink=sink)
    from replay.grid.ray_executor import RayExecutor

    return RayExecutor(root, env, limits, board, address=options.ray, cpus=options.ray_cpus,
                       ship=options.ship, mlflow=(options.mlflow, options.mlflow_experiment)
                       if options.mlflow else None, cells=cells, pass_env=options.ray_pass_env)


def _report(statuses: tuple[CellStatus, ...], stopped: str | None, root: Path, spec: GridSpec,
            console: Console) -> int:
    for line in problems(statuses):
        console.print(f"[yellow]{line}[/]")
    complete = all(s.complete for s in statuses)
    again = (f"rerun `stratune grid {spec.path} --out {root}` to continue (complete cells are "
             "skipped, the others resume from their caches)")
    head = f"grid: {len(statuses)} cells in {root}: {counts(statuses)}"
    if complete:
        console.print(f"{head}; tables: `stratune compare {root}`")
        return EXIT_OK
    if stopped is not None:
        console.print(f"{head}; stopped early ({stopped}); {again}")
        return EXIT_INTERRUPTED if stopped == "interrupted" else EXIT_STOPPED
    failed = any(s.state in ("failed", "blocked") for s in statuses)
    console.print(f"{head}; {again}" + ("; see train.log in the failed cells" if failed else ""))
    return EXIT_FAILED if failed else EXIT_STOPPED
