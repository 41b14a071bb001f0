"""The Python API's calls: `optimize` (and `iterate`, the same run one round at a time),
`evaluate`, `replay` and `plan`. Each builds what the command line builds from its flags and
calls the same code, so a run made here is the run `stratune train` makes with those flags,
and `stratune replay`, `view` and `compare` read it.

Errors are raised, not printed: `StraTuneError` (its subclasses `ConfigError`,
`TaskDataError`, `TraceError`, ...) with the one-line message the command would print;
`RunStopped` when a stop control ended a run (resumable), `ModelCallFailed` when a model call
failed after its retries (resumable), `ReplayFailed` when a trace does not replay.
"""

from __future__ import annotations

import argparse
import io
import queue
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from attrs import field, frozen
from rich.console import Console

from llm_cache.accounting import Accounting
from llm_cache.gates import StopRequested
from replay import controls, evaluate_command, evaluation_dir, models, runner, verify
from replay.agent_skill import read_skill_folder, write_learned
from replay.api.data_task import DataTask, Row, ScorerArg
from replay.api.runs import Cost, Round, Run, load_run
from replay.error_lines import error_line
from replay.evaluation_dir import EvaluationRecord
from replay.options import RunOptions, build_config, parse_budget
from replay.plan import Plan, make_plan
from replay.redact import scrub
from replay.serde import TaskSpec
from replay.tasks import custom
from replay.train_hooks import TrainHooks
from stratune_core.errors import StraTuneError
from stratune_core.events import Event
from stratune_core.state import State

TaskArg = str | Path | DataTask | Sequence[Row]
SkillArg = str | Path


class RunStopped(StraTuneError):
    """A stop control (cost cap, timeout, STOP file, a closed `iterate`) ended the run; the
    same call resumes it."""


class ModelCallFailed(StraTuneError):
    """A model call failed after its retries; events and paid calls are kept, the same call
    resumes the run."""


class ReplayFailed(StraTuneError):
    """The recomputed run differs from its trace; the message names the first difference."""


@frozen(kw_only=True)
class OptimizeResult:
    final_skill: str
    final_id: str
    initial_skill: str
    trajectory: tuple[Round, ...] = field(converter=tuple)
    cost: Cost
    trace: Path  # the run directory: `stratune view`, `replay`, `compare` read it
    stop_reason: str
    spent: int
    budget: int
    test_scores: dict[str, float] | None  # with test_eval: skill id -> mean test score
    skill_folder: Path | None  # with skill=DIR: the learned skill as an Agent Skills folder
    run: Run

    @classmethod
    def of(cls, run: Run, skill_folder: Path | None) -> OptimizeResult:
        assert run.final_skill is not None and run.final_id is not None
        assert run.initial_skill is not None and run.stop_reason is not None
        return cls(final_skill=run.final_skill, final_id=run.final_id,
                   initial_skill=run.initial_skill, trajectory=run.rounds, cost=run.cost,
                   trace=run.path, stop_reason=run.stop_reason, spent=run.spent,
                   budget=run.budget or 0, test_scores=run.test_scores,
                   skill_folder=skill_folder, run=run)


@frozen(kw_only=True)
class Update:
    """What `iterate` yields after each step of the run; the last one carries the result."""

    round: int  # rounds done so far
    spent: int
    budget: int
    events: tuple[Event, ...] = field(converter=tuple)
    cost_usd: float
    result: OptimizeResult | None = None


@frozen(kw_only=True)
class _Prepared:
    options: RunOptions
    extensions: models.Extensions
    data: DataTask | None
    skill: str | None


def _prepare(task: TaskArg, *, target: str, optimizer: str, out: str | Path | None,
             scorer: ScorerArg | None, test: Sequence[Row] | None, skill: SkillArg | None,
             initial_skill: str | None, budget: str | int | None, seed: int, profile: str,
             config: Mapping[str, Any] | str | Path | None, placement: str,
             limit: int | None, data_dir: str | None) -> _Prepared:
    skill_dir = None if skill is None else str(Path(skill).expanduser().resolve())
    if skill_dir is not None:
        read_skill_folder(skill_dir)  # refused here, before anything is written
    data = _data_task(task, scorer, test, initial_skill)
    active = models.active()
    tasks = dict(active.tasks)
    if data is not None:
        spec = data.spec(out if out is not None else Path.cwd(), placement=placement,
                         limit=limit, skill=skill_dir)
        tasks[spec.spec] = data.load
    else:
        spec = _task_spec(task, scorer, placement, limit, skill_dir)
    overrides: dict[str, Any] = {}
    config_file = None
    if isinstance(config, Mapping):
        overrides.update(config)
    elif config is not None:
        config_file = str(config)
    if budget is not None:
        overrides.update(parse_budget(str(budget)))
    options = RunOptions(task=spec, target=target, optimizer=optimizer, seed=seed,
                         profile=profile, config_file=config_file,
                         overrides=tuple(overrides.items()), data_dir=data_dir)
    return _Prepared(options=options, data=data, skill=skill_dir,
                     extensions=models.Extensions(models=active.models, tasks=tasks))


def _data_task(task: TaskArg, scorer: ScorerArg | None, test: Sequence[Row] | None,
               initial_skill: str | None) -> DataTask | None:
    if isinstance(task, DataTask):
        if scorer is not None or test is not None or initial_skill is not None:
            raise StraTuneError("task: a DataTask carries its scorer, test rows and initial "
                                "skill; pass them to stratune.data_task(...)")
        return task
    if isinstance(task, str | Path):
        if test is not None or initial_skill is not None or callable(scorer):
            raise StraTuneError(f"task {str(task)!r}: test rows, an initial skill and a scorer "
                                "function go with a task given as Python rows; a named task "
                                "brings its own (a JSONL task takes scorer='module:function')")
        return None
    return DataTask.build(task, test=test or (), scorer=scorer or "exact",
                          initial_skill=initial_skill)


def _task_spec(task: str | Path, scorer: ScorerArg | None, placement: str, limit: int | None,
               skill: str | None) -> TaskSpec:
    text = str(task)
    path = Path(text).expanduser()
    if text.endswith(".jsonl") or path.is_dir():
        text = str(path.resolve())  # as the command line stores it
    assert scorer is None or isinstance(scorer, str)
    return TaskSpec(spec=text, scorer=scorer, placement=placement, limit=limit, skill=skill)


# ---- output and errors --------------------------------------------------------------------


def _console(progress: bool | None) -> Console:
    """On a terminal (or with progress=True): the command's live display. Elsewhere: nothing
    printed; the output is kept to quote in an error."""
    shown = Console().is_terminal if progress is None else progress
    if shown:
        return Console(record=True)
    return Console(record=True, file=io.StringIO(), width=10_000)


@contextmanager
def _errors() -> Iterator[None]:
    """Errors the command prints as one line are raised as `StraTuneError` with that line."""
    try:
        yield
    except StraTuneError as exc:
        line = " ".join(scrub(str(exc)).split())  # as the command prints it: no secrets
        if line != str(exc):
            exc.args = (line,)
        raise
    except Exception as exc:
        line = error_line(exc)
        if line is None:
            raise
        raise StraTuneError(" ".join(scrub(line).split())) from exc


def _said(console: Console, *starts: str) -> str:
    """The last thing the command printed that begins with one of `starts`, as one line."""
    lines = console.export_text(clear=False).splitlines()
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].startswith(starts):
            return " ".join(" ".join(lines[i:]).split())
    return "the run ended early"


def _raise_for(code: int, console: Console) -> None:
    if code == runner.EXIT_STOPPED:
        raise RunStopped(_said(console, "stopped"))
    if code == runner.EXIT_INTERRUPTED:
        raise KeyboardInterrupt
    if code != runner.EXIT_OK:
        raise ModelCallFailed(_said(console, "model call failed"))


# ---- optimize ---------------------------------------------------------------------------------


class _Recorder:
    """Round observer: writes a Python task's rows into the run directory once the run is
    accepted there (the first round), passes rounds to `iterate`, and stops when asked."""

    def __init__(self, prepared: _Prepared, rounds: queue.Queue[Any] | None = None) -> None:
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


def _train(prepared: _Prepared, out: Path, console: Console, recorder: _Recorder, *,
           concurrency: int, test_eval: bool, max_cost: float | str | None = None,
           timeout: float | str | None = None) -> OptimizeResult:
    with _errors(), models.using(prepared.extensions):
        # the command's stop controls: --max-cost, --timeout, and the STOP file
        flags = argparse.Namespace(out=str(out), mlflow=None, mlflow_experiment=None,
                                   max_cost=None if max_cost is None else str(max_cost),
                                   timeout=None if timeout is None else str(timeout))
        stops = controls.for_train(flags).hooks
        code = runner.train(prepared.options, str(out), console, concurrency=concurrency,
                            test_split="test" if test_eval else None,
                            hooks=TrainHooks(gate=stops.gate,
                                             observers=(recorder, *stops.observers)))
        _raise_for(code, console)
        return OptimizeResult.of(load_run(out), write_learned(prepared.skill, out))


def optimize(task: TaskArg, *, target: str, optimizer: str, out: str | Path,
             budget: str | int | None = "6x", scorer: ScorerArg | None = None,
             test: Sequence[Row] | None = None, skill: SkillArg | None = None,
             initial_skill: str | None = None, seed: int = 0, profile: str = "paper",
             config: Mapping[str, Any] | str | Path | None = None, placement: str = "system",
             limit: int | None = None, data_dir: str | None = None, concurrency: int = 8,
             test_eval: bool = False, max_cost: float | str | None = None,
             timeout: float | str | None = None,
             progress: bool | None = None) -> OptimizeResult:
    """Learn a skill (`stratune train`): `out` is the run directory; call again with the same
    arguments to resume an interrupted run or to read back a finished one.

    task: a task name or path as `--task` takes it, a `DataTask`, or Python rows (dicts or
    (input, expected) pairs) with `scorer` (a built-in name or a function (answer, expected)
    -> [0, 1]), optional `test` rows and `initial_skill`. skill: an Agent Skills folder, whose
    SKILL.md body is the initial skill; the learned one is written as OUT/skill/<name>/.
    config: Config fields ({"selector": "fixed:I1"}) or a JSON file of them. max_cost (USD)
    and timeout ("30m") stop the run as `--max-cost` and `--timeout` do, and so does a file
    OUT/STOP: `RunStopped` is raised and the same call resumes."""
    prepared = _prepare(task, target=target, optimizer=optimizer, out=out, scorer=scorer,
                        test=test, skill=skill, initial_skill=initial_skill, budget=budget,
                        seed=seed, profile=profile, config=config, placement=placement,
                        limit=limit, data_dir=data_dir)
    path = Path(out).expanduser()
    recorder = _Recorder(prepared)
    return _train(prepared, path, _console(progress), recorder, concurrency=concurrency,
                  test_eval=test_eval, max_cost=max_cost, timeout=timeout)


def iterate(task: TaskArg, *, target: str, optimizer: str, out: str | Path,
            budget: str | int | None = "6x", scorer: ScorerArg | None = None,
            test: Sequence[Row] | None = None, skill: SkillArg | None = None,
            initial_skill: str | None = None, seed: int = 0, profile: str = "paper",
            config: Mapping[str, Any] | str | Path | None = None, placement: str = "system",
            limit: int | None = None, data_dir: str | None = None, concurrency: int = 8,
            test_eval: bool = False) -> Iterator[Update]:
    """`optimize`, one `Update` per round (for a notebook's own display); the last update
    holds the result. Leaving the loop early stops the run after the round in progress, as a
    stop control does: the same call resumes it."""
    prepared = _prepare(task, target=target, optimizer=optimizer, out=out, scorer=scorer,
                        test=test, skill=skill, initial_skill=initial_skill, budget=budget,
                        seed=seed, profile=profile, config=config, placement=placement,
                        limit=limit, data_dir=data_dir)
    path = Path(out).expanduser()
    rounds: queue.Queue[Any] = queue.Queue()
    recorder = _Recorder(prepared, rounds)
    console = _console(False)
    done: dict[str, Any] = {}

    def work() -> None:
        try:
            done["result"] = _train(prepared, path, console, recorder, concurrency=concurrency,
                                    test_eval=test_eval)
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


# ---- evaluate, replay, plan -------------------------------------------------------------------


def evaluate(skill: SkillArg | OptimizeResult, *, task: TaskArg, target: str,
             split: str = "test", baseline: SkillArg | None = None,
             scorer: ScorerArg | None = None, test: Sequence[Row] | None = None,
             cache_dir: str | Path = ".stratune-cache", out: str | Path | None = None,
             limit: int | None = None, placement: str = "system", data_dir: str | None = None,
             concurrency: int = 8, progress: bool | None = None) -> EvaluationRecord:
    """Score a skill on a split (`stratune evaluate`). skill and baseline: the text itself (a
    str), a file or an Agent Skills folder (a Path), or an `optimize` result; baseline
    "initial" is the task's initial skill. With `out`, the scores, skills and cache are kept
    there for `stratune replay OUT`."""
    prepared = _prepare(task, target=target, optimizer=target, out=out or cache_dir,
                        scorer=scorer, test=test, skill=None, initial_skill=None, budget=None,
                        seed=0, profile="paper", config=None, placement=placement,
                        limit=limit, data_dir=data_dir)
    console = _console(progress)
    with _errors(), models.using(prepared.extensions):
        loaded = models.load_task(prepared.options.task, data_dir=data_dir)
        skills = [(_label(skill), _skill_text(skill, "skill"))]
        if baseline is not None:
            text = loaded.info.initial_skill if baseline == evaluate_command.INITIAL else \
                _skill_text(baseline, "baseline")
            skills.insert(0, (_label(baseline), text))
        scored = evaluate_command.score_skills(
            loaded, prepared.options.task, skills, target, split=split,
            cache_dir=str(cache_dir), out=None if out is None else str(out),
            concurrency=concurrency, console=console,
            baseline=None if baseline is None else _label(baseline))
        if prepared.data is not None and out is not None:  # so that `stratune replay OUT` reloads it
            prepared.data.write(Path(prepared.options.task.spec))
        return scored.record


def _label(skill: SkillArg | OptimizeResult) -> str:
    if isinstance(skill, OptimizeResult):
        return str(skill.trace / "final_skill.txt")
    return str(skill) if isinstance(skill, Path) or skill == evaluate_command.INITIAL else "skill"


def _skill_text(skill: SkillArg | OptimizeResult, what: str) -> str:
    if isinstance(skill, OptimizeResult):
        return skill.final_skill
    if isinstance(skill, Path):
        return evaluate_command.read_skill(skill.expanduser(), what)
    if not skill.strip():
        raise StraTuneError(f"{what}: empty; give the skill text, or a Path to a skill file "
                            "or an Agent Skills folder")
    return skill


@frozen(kw_only=True)
class ReplayResult:
    path: Path
    message: str  # the line `stratune replay` prints
    events: int | None  # a training run's events and digest (None for an evaluation dir)
    digest: str | None


def replay(path: str | Path, *, scorer: ScorerArg | None = None) -> ReplayResult:
    """Recompute a recorded run (or evaluation directory) offline and check it against its
    trace (`stratune replay`); raises `ReplayFailed` naming the first difference. `scorer`:
    the function a run made from Python rows was scored with, when `stratune replay` cannot
    import it (one defined in a notebook)."""
    console = _console(False)
    with _errors(), models.using(_replay_extensions(Path(path), scorer)):
        code = runner.replay(str(path), console)
        if code != verify.EXIT_OK:
            raise ReplayFailed(_said(console, "replay FAILED").removeprefix("replay FAILED: "))
        message = _said(console, "replay OK", "evaluation OK", "OK")
        if evaluation_dir.is_evaluation_dir(path):
            return ReplayResult(path=Path(path), message=message, events=None, digest=None)
        manifest = load_run(path).manifest
    return ReplayResult(path=Path(path), message=message, events=manifest.events,
                        digest=manifest.event_digest)


def _replay_extensions(path: Path, scorer: ScorerArg | None) -> models.Extensions:
    active = models.active()
    if scorer is None:
        return active
    with _errors():
        task = load_run(path).manifest.task
    if task.scorer is None:
        raise StraTuneError(f"scorer: {path} was recorded with a task that takes no scorer")
    chosen = custom.function_scorer(scorer, task.scorer) if callable(scorer) else \
        custom.resolve_scorer(scorer)

    def load(spec: TaskSpec) -> Any:
        return custom.load(spec.spec, scorer=chosen, placement=spec.placement, limit=spec.limit)

    return models.Extensions(models=active.models, tasks={**active.tasks, task.spec: load})


def plan(task: TaskArg, *, target: str, optimizer: str, budget: str | int | None = "6x",
         scorer: ScorerArg | None = None, test: Sequence[Row] | None = None,
         skill: SkillArg | None = None, initial_skill: str | None = None, seed: int = 0,
         profile: str = "paper", config: Mapping[str, Any] | str | Path | None = None,
         placement: str = "system", limit: int | None = None,
         data_dir: str | None = None) -> Plan:
    """What a budget affords before anything is spent (`stratune plan`): the run's shape,
    rounds, token and cost estimates, and `warning` when the budget is too small."""
    prepared = _prepare(task, target=target, optimizer=optimizer, out=None, scorer=scorer,
                        test=test, skill=skill, initial_skill=initial_skill, budget=budget,
                        seed=seed, profile=profile, config=config, placement=placement,
                        limit=limit, data_dir=data_dir)
    with _errors(), models.using(prepared.extensions):
        loaded = models.load_task(prepared.options.task, data_dir=data_dir)
        return make_plan(build_config(prepared.options, loaded), loaded)

