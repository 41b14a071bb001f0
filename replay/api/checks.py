"""`stratune.evaluate`, `stratune.replay` and `stratune.plan`: the commands of the same names
from Python."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from llm_cache.spec import MAX_CONCURRENCY
from replay.api.arguments import SkillArg, TaskArg, directory, prepare, whole
from replay.api.data_task import Row, ScorerArg
from replay.api.output import console_for, raised_as_errors, said
from replay.api.results import OptimizeResult, ReplayFailed, ReplayResult
from replay.api.runs import load_run
from replay.evaluate import command as evaluate_command
from replay.evaluate import directory as evaluation_dir
from replay.evaluate.directory import EvaluationRecord
from replay.models import specs as models
from replay.plan.estimate import Plan, make_plan
from replay.run import runner, verify
from replay.run.options import build_config
from replay.rundir.serde import TaskSpec
from replay.tasks import custom
from stratune_core.records.errors import StraTuneError


def evaluate(skill: SkillArg | OptimizeResult, *, task: TaskArg, target: str,
             split: str = "test", baseline: SkillArg | None = None,
             scorer: ScorerArg | None = None, test: Sequence[Row] | None = None,
             cache_dir: str | Path = ".stratune-cache", out: str | Path | None = None,
             limit: int | None = None, placement: str = "system", data_dir: str | None = None,
             concurrency: int = 8, progress: bool | None = None,
             tools: Sequence[Callable[..., Any] | str] = (),
             max_turns: int | None = None) -> EvaluationRecord:
    """Score a skill on a split (`stratune evaluate`). skill and baseline: the text itself (a
    str), a file or an Agent Skills folder (a Path), or an `optimize` result; baseline
    "initial" is the task's initial skill. With `out`, the scores, skills and cache are kept
    there for `stratune replay OUT`."""
    with raised_as_errors():
        whole("concurrency", concurrency, 1, MAX_CONCURRENCY)
        directory("cache_dir", cache_dir)
        prepared = prepare(task, target=target, optimizer=target,
                           out=cache_dir if out is None else out, scorer=scorer, test=test,
                           skill=None, initial_skill=None, budget=None, seed=0,
                           profile="paper", config=None, placement=placement, limit=limit,
                           data_dir=data_dir, tools=tools, max_turns=max_turns)
    console = console_for(progress)
    with raised_as_errors(), models.using(prepared.extensions):
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


def replay(path: str | Path, *, scorer: ScorerArg | None = None) -> ReplayResult:
    """Recompute a recorded run (or evaluation directory) offline and check it against its
    trace (`stratune replay`); raises `ReplayFailed` naming the first difference. `scorer`:
    the function a run made from Python rows was scored with, when `stratune replay` cannot
    import it (one defined in a notebook)."""
    console = console_for(False)
    with raised_as_errors(), models.using(_replay_extensions(Path(path), scorer)):
        code = runner.replay(str(path), console)
        if code != verify.EXIT_OK:
            raise ReplayFailed(said(console, "replay FAILED").removeprefix("replay FAILED: "))
        message = said(console, "replay OK", "evaluation OK", "OK")
        if evaluation_dir.is_evaluation_dir(path):
            return ReplayResult(path=Path(path), message=message, events=None, digest=None)
        manifest = load_run(path).manifest
    return ReplayResult(path=Path(path), message=message, events=manifest.events,
                        digest=manifest.event_digest)


def _replay_extensions(path: Path, scorer: ScorerArg | None) -> models.Extensions:
    active = models.active()
    if scorer is None:
        return active
    with raised_as_errors():
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
    with raised_as_errors():
        prepared = prepare(task, target=target, optimizer=optimizer, out=None, scorer=scorer,
                           test=test, skill=skill, initial_skill=initial_skill, budget=budget,
                           seed=seed, profile=profile, config=config, placement=placement,
                           limit=limit, data_dir=data_dir)
    with raised_as_errors(), models.using(prepared.extensions):
        loaded = models.load_task(prepared.options.task, data_dir=data_dir)
        return make_plan(build_config(prepared.options, loaded), loaded)
