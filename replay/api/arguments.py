"""The Python API's arguments turned into what the command line builds from its flags: the
run options, the task spec (a Python task's rows recorded in the run directory), and the
model and task kinds in effect."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from attrs import frozen

from replay.api.data_task import DataTask, Row, ScorerArg
from replay.bridges.specs import normalized
from replay.models import specs as models
from replay.run.method_options import method_from_args
from replay.run.options import RunOptions, parse_budget
from replay.rundir.serde import TaskSpec
from replay.skills.agent_skill import read_skill_folder
from replay.skills.skill_parts import check_kinds, folder_document
from replay.targets.kinds import kind_for_target
from replay.tasks.bundled import bundled_tools
from replay.tasks.registry import custom_path
from replay.tools.toolset import check_turns, register
from stratune_core.records.errors import ConfigError, StraTuneError
from stratune_core.records.method_spec import MethodSpec, generator_names, method_names

TaskArg = str | Path | DataTask | Sequence[Row]
SkillArg = str | Path


@frozen(kw_only=True)
class Prepared:
    options: RunOptions
    extensions: models.Extensions
    data: DataTask | None
    skill: str | None


def prepare(task: TaskArg, *, target: str, optimizer: str, out: str | Path | None,
            scorer: ScorerArg | None, test: Sequence[Row] | None, skill: SkillArg | None,
            initial_skill: str | None, budget: str | int | None, seed: int, profile: str,
            config: Mapping[str, Any] | str | Path | None, placement: str,
            limit: int | None, data_dir: str | None, method: str = "stratune",
            generator: str | None = None, skill_parts: Sequence[str] = (),
            tools: Sequence[Callable[..., Any] | str] = (),
            max_turns: int | None = None) -> Prepared:
    _check_arguments(target=target, optimizer=optimizer, out=out, budget=budget, seed=seed,
                     profile=profile, placement=placement, limit=limit, data_dir=data_dir,
                     skill=skill)
    skill_dir = None if skill is None else str(Path(skill).expanduser().resolve())
    kinds = check_kinds(tuple(skill_parts), "skill_parts")
    if kinds and skill_dir is None:
        raise StraTuneError("skill_parts: learns parts of an Agent Skills folder; pass the "
                            "folder as skill=")
    if skill_dir is not None:  # refused here, before anything is written
        folder_document(read_skill_folder(skill_dir), kinds)
    data = _data_task(task, scorer, test, initial_skill)
    active = models.active()
    tasks = dict(active.tasks)
    if data is not None:
        spec = data.spec(out if out is not None else Path.cwd(), placement=placement,
                         limit=limit, skill=skill_dir)
        tasks[spec.spec] = data.load
    else:
        spec = _task_spec(task, scorer, placement, limit, skill_dir)
    harness = kind_for_target(target)
    spec = attrs.evolve(spec, skill_parts=kinds, kind=harness,
                        **_tools(task if harness is None else None, tools, max_turns))
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
                         overrides=tuple(overrides.items()), data_dir=data_dir,
                         method=_method(method, generator, profile))
    return Prepared(options=options, data=data, skill=skill_dir,
                    extensions=models.Extensions(models=active.models, tasks=tasks))


def _tools(task: TaskArg | None, tools: Sequence[Callable[..., Any] | str],
           max_turns: int | None) -> dict[str, Any]:
    """The task spec's tools: functions (registered in this process by their spelling),
    `--tools` spellings, or a bundled agent task's own."""
    if isinstance(tools, str | bytes) or not isinstance(tools, Sequence):
        raise StraTuneError("tools: give a list of functions (or of --tools spellings)")
    names = [t for t in tools if isinstance(t, str)]
    spelled = (*register([t for t in tools if not isinstance(t, str)]), *names)
    if not spelled and isinstance(task, str):
        spelled = bundled_tools(task)
    if max_turns is not None and not spelled:
        raise StraTuneError("max_turns: limits an agent episode's turns; give tools too")
    if spelled:
        check_turns(max_turns)
    return {"tools": tuple(spelled), "max_turns": max_turns}


def _check_arguments(*, target: object, optimizer: object, out: object, budget: object,
                     seed: object, profile: object, placement: object, limit: object,
                     data_dir: object, skill: object) -> None:
    """Arguments of the wrong type or empty are a `ConfigError` naming the argument, as the
    command refuses its flags (never a TypeError from deep inside, nor a run in the current
    directory for `out=""`)."""
    for name, value in (("target", target), ("optimizer", optimizer), ("profile", profile),
                        ("placement", placement)):
        if not isinstance(value, str):
            raise ConfigError(f"{name}: expected a string, got {value!r}")
    if out is not None:
        directory("out", out)
    for name, value in (("data_dir", data_dir), ("skill", skill)):
        if value is not None and (not isinstance(value, str | Path) or not str(value).strip()):
            raise ConfigError(f"{name}: expected a path, got {value!r}")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, str | int)):
        raise ConfigError(f"budget: expected N or \"Kx\", got {budget!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"seed: expected a whole number >= 0, got {seed!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ConfigError(f"limit: expected a whole number >= 1, got {limit!r}")


def directory(name: str, value: object) -> Path:
    """An output directory argument: `out=""` would put the run's files in the current
    directory, as `--out ''` would; refused as the flag is."""
    if not isinstance(value, str | Path) or not str(value).strip():
        raise ConfigError(f"{name}: {value!r} is empty; give a directory (it is created if "
                          "missing)")
    return Path(value)


def whole(name: str, value: object, low: int, high: int | None = None) -> int:
    """An integer argument (not a bool) of at least `low` (and at most `high`)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(f"{name}: expected a whole number >= {low}, got {value!r}")
    if high is not None and value > high:
        raise ConfigError(f"{name}: at most {high}, got {value!r}")
    return value


def _method(method: str, generator: str | None, profile: str) -> MethodSpec:
    """`method=` and `generator=` as `--method` and `--generator` take them: a baseline, or
    StraTune with another method's candidate generation (Table 4); a profile is StraTune's."""
    for name, value in (("method", method), ("generator", generator)):
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{name}: expected a name, got {value!r}")
    if method not in method_names():
        raise ConfigError(f"method: {method!r} is not a method; use one of "
                          f"{' | '.join(method_names())}")
    if generator is not None and generator not in generator_names():
        raise ConfigError(f"generator: {generator!r} is not a generator; use one of "
                          f"{' | '.join(generator_names())}")
    flags = argparse.Namespace(method=method, generator=generator, profile=profile)
    try:
        return method_from_args(flags)
    except ConfigError as exc:  # the flag's name as the API spells it
        raise ConfigError(str(exc).replace("--", "").replace("method ", "method=", 1)) from None


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
    # a Path is a folder or file even when named like a built-in task ("demo")
    path = Path(text).expanduser() if isinstance(task, Path) else custom_path(text)
    if path is not None and (text.endswith(".jsonl") or path.is_dir()):
        text = str(path.resolve())  # as the command line stores it
    text = normalized(text)
    assert scorer is None or isinstance(scorer, str)
    return TaskSpec(spec=text, scorer=scorer, placement=placement, limit=limit, skill=skill)
