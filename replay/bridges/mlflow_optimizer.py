"""`stratune.mlflow.StraTuneOptimizer`: StraTune as the optimizer of MLflow's
`mlflow.genai.optimize_prompts` (a `BasePromptOptimizer`).

The run is a StraTune run like any other (`stratune.optimize` underneath): the templates
`optimize_prompts` hands over are the skill (one part per template, `mlflow_prompts.py`), the
train_data records are the training samples, and the target is MLflow's `eval_fn` itself: one
execution is one `eval_fn(candidate, [record])` call (the predict_fn on the record, then the
scorers and the aggregation), made by a function backend behind the run's cache. So a rerun pays
for no (candidate, record) pair twice, and the run directory replays without MLflow
(`stratune replay OUT`). MLflow registers the returned templates as new prompt versions.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import mlflow
from mlflow.genai.optimize.optimizers.base import BasePromptOptimizer
from mlflow.genai.optimize.types import PromptOptimizerOutput

from llm_cache.accounting import Accounting
from llm_cache.backends.function import FunctionBackend
from llm_cache.records import Request, Response
from replay.api.arguments import prepare
from replay.api.checks import replay as replay_run
from replay.api.output import raised_as_errors
from replay.api.results import OptimizeResult, ReplayResult
from replay.api.training import train_prepared
from replay.bridges.mlflow_task import PromptData, PromptTask, Reply
from replay.models import specs as models
from replay.run.verify import replay_llm
from replay.rundir.trace import RunDir
from replay.tracking.mlflow_runs import round_metrics
from stratune_core.records.errors import ConfigError, TaskDataError
from stratune_core.state.events import Event
from stratune_core.state.state import State

TARGET = "mlflow:predict_fn"
RUN_OPTIONS = ("profile", "config", "concurrency", "max_cost", "timeout", "progress",
               "test_eval", "generator")
# what MLflow's eval_fn puts in `outputs` when the predict_fn raised
# (mlflow/genai/optimize/optimize.py, _build_eval_fn): not an answer to cache
FAILED_PREDICT = "Failed to invoke the predict_fn with "
log = logging.getLogger(__name__)
EvalFn = Callable[[dict[str, str], list[dict[str, Any]]], list[Any]]


def executor(eval_fn: EvalFn) -> Callable[[Request], Response]:
    """The target's backend function: one eval_fn call on the request's candidate templates
    and record. A record the predict_fn failed on, or left without a score in [0, 1], is an
    error rather than a reply, so nothing wrong is cached."""

    def execute(request: Request) -> Response:
        record = json.loads(request.messages[0].text())
        (result,) = eval_fn(json.loads(request.system), [record])
        outputs = result.outputs if isinstance(result.outputs, str) else \
            json.dumps(result.outputs, ensure_ascii=False, default=str)
        if outputs.startswith(FAILED_PREDICT):
            raise TaskDataError(f"predict_fn failed: {outputs[:300]}; fix it and call "
                                "optimize_prompts again (paid executions are cached)")
        if result.score is None:
            raise TaskDataError("optimize_prompts gave the record no score: StraTune learns "
                                "from scores; pass scorers=[...]")
        score = float(result.score)
        if not 0.0 <= score <= 1.0:
            raise TaskDataError(f"the aggregated score is {score:g}; StraTune needs scores in "
                                "[0, 1]: pass an aggregation that returns one")
        reply = Reply(score=score, outputs=outputs,
                      individual_scores={k: float(v) for k, v in
                                         (result.individual_scores or {}).items()},
                      rationales={k: str(v) for k, v in (result.rationales or {}).items() if v})
        return Response(text=reply.text(), model=request.model)

    return execute


def scored(eval_fn: EvalFn) -> bool:
    """False when optimize_prompts was called without scorers, so that the refusal comes before
    any execution. MLflow 3.18's eval_fn closes over its `metric_fn`, None without scorers; an
    eval_fn of another shape counts as scored (its first reply then says if it is not)."""
    code = getattr(eval_fn, "__code__", None)
    cells = dict(zip(getattr(code, "co_freevars", ()), eval_fn.__closure__ or (), strict=False))
    return "metric_fn" not in cells or cells["metric_fn"].cell_contents is not None


class _Rounds:
    """Round observer: records the templates and records in the run directory once the run is
    accepted there (its first round), and logs each round to the active MLflow run."""

    def __init__(self, data: PromptData, folder: Path, tracking: bool) -> None:
        self._data: PromptData | None = data
        self._folder = folder
        self._tracking = tracking

    def after_round(self, state: State, events: Sequence[Event],
                    accounting: Accounting) -> None:
        if self._data is not None:
            self._data.write(self._folder)
            self._data = None
        if not self._tracking or state.finished or mlflow.active_run() is None:
            return
        metrics = {**round_metrics(state, events),
                   "accepted_total": float(sum(state.accepted_per_epoch))}
        try:
            mlflow.log_metrics({f"stratune.{k}": v for k, v in metrics.items()},
                               step=state.round)
        except Exception as exc:  # tracking is never a reason to stop a paid run
            self._tracking = False
            log.warning("MLflow logging failed (%s: %s); the run goes on without it",
                        type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "")


def _means(task: PromptTask, out: Path, model: str, skill: str) -> tuple[float, dict[str, float]]:
    """A skill's mean score over the records, and each scorer's, from the run's cache."""
    samples = task.split("train")
    with replay_llm(RunDir.at(out)) as llm:
        replies = [Reply.read(r.text) for r in llm.complete(
            [task.requests(skill, s, model)[0] for s in samples])]
    names = dict.fromkeys(n for r in replies for n in r.individual_scores)
    per = {n: [r.individual_scores[n] for r in replies if n in r.individual_scores]
           for n in names}
    return (sum(r.score for r in replies) / len(replies),
            {n: sum(values) / len(values) for n, values in per.items()})


class StraTuneOptimizer(BasePromptOptimizer):
    """Optimize MLflow prompt templates with StraTune (`mlflow.genai.optimize_prompts(...,
    optimizer=StraTuneOptimizer(...))`).

    optimizer: the model spec that writes candidates (`--optimizer`); the target is the
    predict_fn. out: the run directory. budget: executions, one per (candidate, record) pair
    ("6x": six per record). threshold: the aggregated score at which a record counts as
    solved. name: the task's name in the run. Other keyword arguments as `stratune.optimize`
    takes them: profile, config, concurrency, max_cost, timeout, progress, generator, and
    test_eval (default True: the initial and final templates are scored on every record after
    the run, outside the budget, for the scores MLflow logs)."""

    def __init__(self, *, optimizer: str, out: str | Path, budget: str | int | None = "6x",
                 seed: int = 0, threshold: float = 1.0, name: str = "prompts",
                 **run_options: Any) -> None:
        if "method" in run_options:
            raise ConfigError("method: StraTuneOptimizer runs StraTune, whose candidates keep "
                              "every template variable; for GEPA use MLflow's "
                              "GepaPromptOptimizer")
        unknown = sorted(set(run_options) - set(RUN_OPTIONS))
        if unknown:
            raise ConfigError(f"{unknown[0]}: not an option of StraTuneOptimizer; it takes "
                              f"{', '.join(RUN_OPTIONS)}")
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) \
                or not 0.0 < threshold <= 1.0:
            raise ConfigError(f"threshold: expected a number in (0, 1], got {threshold!r}")
        self.optimizer, self.out, self.budget, self.seed = optimizer, Path(out), budget, seed
        self.threshold, self.name = float(threshold), name
        self.run_options = dict(run_options)
        self.result: OptimizeResult | None = None

    def optimize(self, eval_fn: EvalFn, train_data: list[dict[str, Any]],
                 target_prompts: dict[str, str],
                 enable_tracking: bool = True) -> PromptOptimizerOutput:
        options = dict(self.run_options)
        test_eval = bool(options.pop("test_eval", True))
        with raised_as_errors():
            if eval_fn is None or not train_data:
                raise TaskDataError("optimize_prompts gave no train_data; StraTune learns from "
                                    "executions: pass train_data and scorers")
            if not scored(eval_fn):
                raise TaskDataError("optimize_prompts was called without scorers; StraTune "
                                    "learns from scores: pass scorers=[...]")
            data = PromptData.build(self.name, target_prompts, train_data, self.threshold)
        task = data.task()
        spec = data.spec(self.out)
        backend = FunctionBackend(executor(eval_fn), name="mlflow predict_fn", concurrency=1)
        with raised_as_errors(), models.using(_extensions(spec, task, backend)):
            prepared = prepare(spec, target=TARGET, optimizer=self.optimizer, out=self.out,
                               scorer=None, test=None, skill=None, initial_skill=None,
                               budget=self.budget, seed=self.seed,
                               profile=options.pop("profile", "paper"),
                               config=options.pop("config", None), placement="system",
                               limit=None, data_dir=None, generator=options.pop("generator", None))
        rounds = _Rounds(data, data.folder(self.out), enable_tracking)
        result = train_prepared(prepared, self.out, test_split="train" if test_eval else None,
                                observers=(rounds,), **options)
        self.result = result
        templates = task.templates(result.final_skill)
        if enable_tracking and mlflow.active_run() is not None:
            _log_run(result)
        if not test_eval:
            return PromptOptimizerOutput(optimized_prompts=templates)
        model = result.run.manifest.config.target_model
        initial, initial_per = _means(task, result.trace, model, result.initial_skill)
        final, final_per = _means(task, result.trace, model, result.final_skill)
        return PromptOptimizerOutput(optimized_prompts=templates, initial_eval_score=initial,
                                     final_eval_score=final,
                                     initial_eval_score_per_scorer=initial_per,
                                     final_eval_score_per_scorer=final_per)

    def replay(self) -> ReplayResult:
        """Recompute the run in `out` offline from its cache, as `stratune replay OUT` does."""
        return replay_run(self.out)


def _extensions(spec: str, task: PromptTask, backend: FunctionBackend) -> models.Extensions:
    active = models.active()
    kind = models.ModelKind(canonical=models.PROGRAM_MODELS["mlflow"].canonical,
                            backend=lambda _body: backend)
    return models.Extensions(models={**active.models, "mlflow": kind},
                             tasks={**active.tasks, spec: lambda _spec: task})


def _log_run(result: OptimizeResult) -> None:
    """The run's totals and where its trace is, on the active MLflow run (best effort)."""
    metrics: Mapping[str, float] = {"stratune.spent_final": float(result.spent),
                                    "stratune.rounds": float(len(result.trajectory)),
                                    "stratune.cost_usd": result.cost.usd}
    try:
        mlflow.log_metrics(dict(metrics))
        mlflow.set_tags({"stratune.run_dir": str(result.trace),
                         "stratune.final_id": result.final_id})
    except Exception as exc:  # tracking is never a reason to fail a finished run
        log.warning("MLflow logging failed (%s: %s)", type(exc).__name__,
                    str(exc).splitlines()[0] if str(exc) else "")
