"""Running one cell: an ordinary `runner.train` into the cell's run directory, with the grid's
shared gate, stop control, progress reporting and (optionally) MLflow tracking as hooks.

The same function runs a cell in a thread of `stratune grid` and in a Ray task on another node.
A cell's terminal output goes to `train.log` in its run directory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from attrs import evolve, frozen
from rich.console import Console

from llm_cache.accounting import Accounting
from llm_cache.backends.base import Backend
from llm_cache.gates import CallGate
from llm_cache.records import Role
from replay.grid.cells import Cell, finished, write_coordinates
from replay.run.hooks import RoundObserver, TrainHooks
from replay.run.options import RunOptions
from replay.rundir import seal
from replay.rundir.trace import RunDir
from stratune_core.records.enums import Verdict
from stratune_core.records.errors import StraTuneError
from stratune_core.records.task import Task
from stratune_core.round.registry import entry_of
from stratune_core.state.candidate_events import CandidateDecided
from stratune_core.state.events import (
    Event,
    ExecutionsCharged,
    RoundStarted,
    RunFinished,
    RunStarted,
)
from stratune_core.state.state import State

LOG = "train.log"
STATES = ("pending", "waiting", "running", "done", "skipped", "stopped", "failed", "blocked")


class CellEnv(Protocol):
    """Where a cell's models and task come from. The default builds them from the specs; tests
    and scripted examples pass their own (picklable, for Ray)."""

    def backends(self, cell: Cell) -> Mapping[Role, Backend] | None: ...

    def task(self, cell: Cell) -> Task | None: ...


class SpecEnv:
    """Models from the cell's model specs, the task from its task spec (what `train` does)."""

    def backends(self, cell: Cell) -> Mapping[Role, Backend] | None:
        return None

    def task(self, cell: Cell) -> Task | None:
        return None


def load_cell_task(env: CellEnv, cell: Cell) -> Task:
    from replay.models import specs as models

    task = env.task(cell)
    if task is not None:
        return task
    return models.load_task(cell.options.task, data_dir=cell.options.data_dir)


def fitted_options(env: CellEnv, cell: Cell) -> RunOptions:
    """The cell's options as `train` records them in its manifest (`method_options.fit_method`:
    a sampling temperature left out for a target that takes none). Only a cell whose method
    fits its settings to the target builds the target's backend for this."""
    from replay.models import specs as models
    from replay.run.method_options import fit_method

    if entry_of(cell.options.method).fit is None:
        return cell.options
    backends = env.backends(cell)
    target = (backends[Role.TARGET] if backends is not None
              else models.build_backend(cell.options.target_model))
    return evolve(cell.options, method=fit_method(cell.options.method, target))


@frozen(kw_only=True)
class CellStatus:
    id: str
    state: str = "pending"
    round: int = 0
    spent: int = 0
    budget: int = 0
    accepted: int = 0
    test_score: float | None = None
    message: str = ""

    @property
    def complete(self) -> bool:
        return self.state in ("done", "skipped")


class Reporter(Protocol):
    def report(self, status: CellStatus) -> None: ...


class _Progress:
    """Round observer feeding the grid's live table."""

    def __init__(self, cell: Cell, reporter: Reporter) -> None:
        self.cell = cell
        self.reporter = reporter

    def after_round(self, state: State, events: Sequence[Event], accounting: Accounting) -> None:
        self.reporter.report(CellStatus(
            id=self.cell.id, state="running", round=state.round, spent=state.budget.spent,
            budget=state.budget.limit, accepted=sum(state.accepted_per_epoch)))


def recorded_status(cell: Cell, root: Path, state: str) -> CellStatus:
    """What a cell's run directory says: rounds, spent, accepted and the final test score."""
    run_dir = RunDir.at(cell.path(root))
    rounds = spent = budget = accepted = 0
    final_id = None
    for event in run_dir.read_events(texts=False)[1]:
        if isinstance(event, RunStarted):
            budget = event.budget
        elif isinstance(event, RoundStarted):
            rounds = event.round + 1
        elif isinstance(event, ExecutionsCharged):
            spent = event.spent
        elif isinstance(event, RunFinished):
            spent, final_id = event.spent, event.final_id
        elif isinstance(event, CandidateDecided) and event.verdict is Verdict.ACCEPTED:
            accepted += 1
    score = None
    evaluation = run_dir.read_json(run_dir.evaluation) if final_id is not None else None
    if evaluation is not None:
        score = evaluation["scores"].get(final_id)
    return CellStatus(id=cell.id, state=state, round=rounds, spent=spent, budget=budget,
                      accepted=accepted, test_score=score)


# The lines of a run's log that say why it ended (the line after a failure only says how to
# resume, which the grid's table has no room to repeat for every cell)
CAUSES = ("stopped", "model call failed", "error:")


def _cause_line(log: Path, start: int) -> str:
    text = log.read_text(encoding="utf-8", errors="replace")[start:]
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    causes = [ln for ln in lines if ln.startswith(CAUSES)]
    return (causes or lines or [""])[-1]


def run_cell(cell: Cell, root: Path, env: CellEnv, *, gate: CallGate | None,
             observers: Sequence[RoundObserver], reporter: Reporter,
             tracker: Any = None) -> CellStatus:
    """Train the cell (skipped when already complete); never raises for the cell's own failure:
    the returned status says what happened and the log holds the details."""
    from replay.run import runner

    root = Path(root)
    if finished(cell.path(root), cell.test_eval):
        # a complete cell is skipped only while its seal holds: an altered or downgraded cell
        # is never counted as done (nor rerun over: `train` would refuse it the same way)
        problem = seal.check(RunDir.at(cell.path(root)))
        status = recorded_status(cell, root, "skipped") if problem is None else CellStatus(
            id=cell.id, state="failed", message=problem)
        reporter.report(status)
        return status
    write_coordinates(cell, root)
    log = cell.path(root) / LOG
    start = log.stat().st_size if log.exists() else 0
    reporter.report(CellStatus(id=cell.id, state="running"))
    with open(log, "a", encoding="utf-8") as fh:
        console = Console(file=fh, width=120, color_system=None, force_terminal=False,
                          soft_wrap=True)
        hooks = TrainHooks(backends=env.backends(cell), task=env.task(cell), gate=gate,
                           observers=(*(() if tracker is None else (tracker,)),
                                      _Progress(cell, reporter), *observers))
        try:
            code = runner.train(cell.options, cell.path(root), console,
                                concurrency=cell.concurrency,
                                test_split="test" if cell.test_eval else None, hooks=hooks)
        except StraTuneError as exc:
            console.print(f"error: {exc}")
            code = 2
        except Exception:  # a bug or an unexpected failure in one cell must not end the grid
            console.print_exception()
            code = 1
    if tracker is not None:
        tracker.finish(code)
    if code == runner.EXIT_OK:
        status = recorded_status(cell, root, "done")
    else:
        state = "stopped" if code in (runner.EXIT_STOPPED, runner.EXIT_INTERRUPTED) else "failed"
        status = evolve(recorded_status(cell, root, state), message=_cause_line(log, start))
    reporter.report(status)
    return status
