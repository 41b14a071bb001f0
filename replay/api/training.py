"""`stratune.optimize` and `stratune.iterate`: `stratune train` from Python. The run is the
one the command makes with the same arguments (same events, same digest), so `stratune view`,
`replay` and `compare` read it."""

from __future__ import annotations

import argparse
import queue
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from llm_cache.accounting import Accounting
from llm_cache.gates import StopRequested
from llm_cache.spec import MAX_CONCURRENCY
from replay.api.arguments import Prepared, SkillArg, TaskArg, prepare, whole
from replay.api.data_task import Row, ScorerArg
from replay.api.output import console_for, raise_for, raised_as_errors
from replay.api.results import OptimizeResult, Update
from replay.api.runs import load_run
from replay.models import specs as models
from replay.run import runner
from replay.run.hooks import RoundObserver, TrainHooks
from replay.skills.agent_skill import learned_folder
from replay.stops import flags as controls
from stratune_core.state.events import Event
from stratune_core.state.state import State


class _Recorder:
    """Round observer: writes a Python task's rows into the run directory once the run is
    accepted there (the first round), passes rounds to `iterate`, and stops when asked."""

    def __init__(self, prepared: Prepared, rounds: queue.Queue[Any] | None = None) -> None:
        self._data = prepared.data
        self._folder = None if prepared.data is None else Path(prepared.options.task.spec)
        self._rounds = rounds
        self.stop = threading.Event()

    def after_round(self, state: State, events: Sequence[Event],
                    accounting: Accounting) -> None:
        if self._data is not None and self._folder is not None:
            self._data.write(self._folder)
            self._data = None
        if self._rounds is not None:
            self._rounds.put(Update(round=state.round, spent=state.budget.spent,
                                    budget=state.budget.limit, events=tuple(events),
                                    cost_usd=accounting.total().cost_usd))
        if self.stop.is_set():
            raise StopRequested("the caller closed the iteration",
                                "call again with the same arguments to resume")


def _train(prepared: Prepared, out: Path, console: Console, recorder: _Recorder, *,
           concurrency: int, test_split: str | None, max_cost: float | str | None = None,
           timeout: float | str | None = None,
           observers: Sequence[RoundObserver] = ()) -> OptimizeResult:
    with raised_as_errors(), models.using(prepared.extensions):
        # the command's stop controls: --max-cost, --timeout, and the STOP file
        flags = argparse.Namespace(out=str(out), mlflow=None, mlflow_experiment=None,
                                   max_cost=None if max_cost is None else str(max_cost),
                                   timeout=None if timeout is None else str(timeout))
        stops = controls.for_train(flags).hooks
        hooks = TrainHooks(gate=stops.gate, observers=(recorder, *observers, *stops.observers))
        code = runner.train(prepared.options, str(out), console, concurrency=concurrency,
                            test_split=test_split, hooks=hooks)
        raise_for(code, console)
        return OptimizeResult.of(load_run(out), learned_folder(prepared.skill, out))


def train_prepared(prepared: Prepared, out: str | Path, *, progress: bool | None = None,
                   concurrency: int = 8, test_split: str | None = None,
                   max_cost: float | str | None = None, timeout: float | str | None = None,
                   observers: Sequence[RoundObserver] = ()) -> OptimizeResult:
    """`optimize` on arguments `prepare` already checked, for a bridge to another framework
    (`replay/bridges/`): its own round `observers`, and `test_split` scored after the run
    (outside the budget, as `test_eval` scores the test split)."""
    with raised_as_errors():
        whole("concurrency", concurrency, 1, MAX_CONCURRENCY)
    path = Path(out).expanduser()
    return _train(prepared, path, console_for(progress), _Recorder(prepared),
                  concurrency=concurrency, test_split=test_split, max_cost=max_cost,
                  timeout=timeout, observers=observers)


def optimize(task: TaskArg, *, target: str, optimizer: str, out: str | Path,
             budget: str | int | None = "6x", scorer: ScorerArg | None = None,
             test: Sequence[Row] | None = None, skill: SkillArg | None = None,
             initial_skill: str | None = None, seed: int = 0, profile: str = "paper",
             config: Mapping[str, Any] | str | Path | None = None, placement: str = "system",
             limit: int | None = None, data_dir: str | None = None, concurrency: int = 8,
             test_eval: bool = False, max_cost: float | str | None = None,
             timeout: float | str | None = None, progress: bool | None = None,
             method: str = "stratune", generator: str | None = None,
             skill_parts: Sequence[str] = (), tools: Sequence[Callable[..., Any] | str] = (),
             max_turns: int | None = None) -> OptimizeResult:
    """Learn a skill (`stratune train`): `out` is the run directory; call again with the same
    arguments to resume an interrupted run or to read back a finished one.

    task: a task name or path as `--task` takes it, a `DataTask`, or Python rows (dicts or
    (input, expected) pairs) with `scorer` (a built-in name or a function (answer, expected)
    -> [0, 1]), optional `test` rows and `initial_skill`. skill: an Agent Skills folder, whose
    SKILL.md body is the initial skill; the learned one is written as OUT/skill/<name>/;
    skill_parts ("description", "references") learns those beside the body, as `--skill-parts`.
    config: Config fields ({"selector": "fixed:I1"}) or a JSON file of them. max_cost (USD)
    and timeout ("30m") stop the run as `--max-cost` and `--timeout` do, and so does a file
    OUT/STOP: `RunStopped` is raised and the same call resumes. method: a baseline's
    name as `--method` takes it (`stratune train --help` lists them); generator:
    StraTune with that method's candidate generation (a Table 4 hybrid) as `--generator`.
    tools: functions the target may call in each execution, which is then an agent episode of
    at most max_turns model calls (typed, documented functions; `stratune.tool(pure=True)`
    marks one that replay may recompute), or `--tools` spellings."""
    with raised_as_errors():
        whole("concurrency", concurrency, 1, MAX_CONCURRENCY)
        prepared = prepare(task, target=target, optimizer=optimizer, out=out, scorer=scorer,
                           test=test, skill=skill, initial_skill=initial_skill, budget=budget,
                           seed=seed, profile=profile, config=config, placement=placement,
                           limit=limit, data_dir=data_dir, method=method, generator=generator,
                           skill_parts=skill_parts, tools=tools, max_turns=max_turns)
    path = Path(out).expanduser()
    recorder = _Recorder(prepared)
    return _train(prepared, path, console_for(progress), recorder, concurrency=concurrency,
                  test_split="test" if test_eval else None, max_cost=max_cost, timeout=timeout)


def iterate(task: TaskArg, *, target: str, optimizer: str, out: str | Path,
            budget: str | int | None = "6x", scorer: ScorerArg | None = None,
            test: Sequence[Row] | None = None, skill: SkillArg | None = None,
            initial_skill: str | None = None, seed: int = 0, profile: str = "paper",
            config: Mapping[str, Any] | str | Path | None = None, placement: str = "system",
            limit: int | None = None, data_dir: str | None = None, concurrency: int = 8,
            test_eval: bool = False, method: str = "stratune",
            generator: str | None = None, skill_parts: Sequence[str] = (),
            tools: Sequence[Callable[..., Any] | str] = (),
            max_turns: int | None = None) -> Iterator[Update]:
    """`optimize`, one `Update` per round (for a notebook's own display); the last update
    holds the result. Leaving the loop early stops the run after the round in progress, as a
    stop control does: the same call resumes it."""
    with raised_as_errors():
        whole("concurrency", concurrency, 1, MAX_CONCURRENCY)
        prepared = prepare(task, target=target, optimizer=optimizer, out=out, scorer=scorer,
                           test=test, skill=skill, initial_skill=initial_skill, budget=budget,
                           seed=seed, profile=profile, config=config, placement=placement,
                           limit=limit, data_dir=data_dir, method=method, generator=generator,
                           skill_parts=skill_parts, tools=tools, max_turns=max_turns)
    path = Path(out).expanduser()
    rounds: queue.Queue[Any] = queue.Queue()
    recorder = _Recorder(prepared, rounds)
    console = console_for(False)
    done: dict[str, Any] = {}

    def work() -> None:
        try:
            done["result"] = _train(prepared, path, console, recorder, concurrency=concurrency,
                                    test_split="test" if test_eval else None)
        except BaseException as exc:  # handed to the caller's thread
            done["error"] = exc
        finally:
            rounds.put(None)

    thread = threading.Thread(target=work, name="stratune-iterate", daemon=True)
    thread.start()
    last: Update | None = None
    try:
        while (update := rounds.get()) is not None:
            last = update
            yield update
    finally:
        recorder.stop.set()
        while thread.is_alive():  # drain, so the worker never blocks on a full queue
            thread.join(timeout=0.05)
    if "error" in done:
        raise done["error"]
    result: OptimizeResult = done["result"]
    if last is None:
        last = Update(round=0, spent=0, budget=result.budget, events=(), cost_usd=0.0)
    yield Update(round=last.round, spent=result.spent, budget=result.budget, events=(),
                 cost_usd=result.cost.usd, result=result)
