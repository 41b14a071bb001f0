"""`stratune optimize-prompts`: MLflow's `optimize_prompts` with StraTune as its optimizer, from
the command line, and `optimize_prompts`, the same call from Python with its prompt URIs
checked first.

MLflow refuses a prompt URI the registry does not hold with its own exception, after it set up
the run; here every URI is loaded first, and one that is missing is a one-line error (exit 2,
`StraTuneError`) before anything is called or paid.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import mlflow
from mlflow.exceptions import MlflowException
from mlflow.genai.optimize.types import PromptOptimizationResult
from mlflow.genai.scorers import Scorer
from rich.console import Console
from rich.markup import escape

from replay.api.results import ModelCallFailed, RunStopped
from replay.bridges.mlflow_optimizer import StraTuneOptimizer
from replay.tasks import files
from replay.tasks.custom import import_module
from stratune_core.records.errors import StraTuneError

EXIT_FAILED, EXIT_STOPPED = 1, 3


def _line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def check_prompts(uris: Sequence[str]) -> None:
    """Each prompt URI names a prompt the registry holds, else one line saying which."""
    if not uris:
        raise StraTuneError("prompt_uris: give at least one prompt URI (prompts:/NAME/VERSION)")
    for uri in uris:
        try:
            mlflow.genai.load_prompt(uri)
        except MlflowException as exc:
            raise StraTuneError(f"prompt {uri}: not in the Prompt Registry at "
                                f"{mlflow.get_tracking_uri()} ({_line(exc)}); register it with "
                                "mlflow.genai.register_prompt, or fix the URI") from None


def optimize_prompts(*, prompt_uris: Sequence[str], **arguments: Any) -> PromptOptimizationResult:
    """`mlflow.genai.optimize_prompts(...)` with its prompt URIs checked first."""
    check_prompts(prompt_uris)
    return mlflow.genai.optimize_prompts(prompt_uris=list(prompt_uris), **arguments)


def _attribute(spec: str, flag: str) -> Any:
    module, _, name = spec.partition(":")
    if not module or not name:
        raise StraTuneError(f"{flag} {spec}: give MODULE:NAME")
    try:
        return getattr(import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise StraTuneError(f"{flag} {spec}: cannot load it ({_line(exc)}); give MODULE:NAME "
                            "importable from the current directory") from None


def _scorer(spec: str) -> Scorer:
    found = _attribute(spec, "--scorer")
    if not isinstance(found, Scorer):
        raise StraTuneError(f"--scorer {spec}: not an MLflow scorer; decorate the function with "
                            "@mlflow.genai.scorers.scorer, or name a built-in scorer's instance")
    return found


def run(args: argparse.Namespace, console: Console) -> int:
    if args.tracking_uri is not None:
        mlflow.set_tracking_uri(args.tracking_uri)
    predict = _attribute(args.predict, "--predict")
    if not callable(predict):
        raise StraTuneError(f"--predict {args.predict}: not callable; name the predict_fn")
    scorers = [_scorer(spec) for spec in args.scorer]
    aggregation = None if args.aggregation is None else \
        _attribute(args.aggregation, "--aggregation")
    data = [row for _, row in files.read_jsonl(files.require_file(Path(args.data), "--data"),
                                               "train data")]
    optimizer = StraTuneOptimizer(optimizer=args.optimizer, out=args.out, budget=args.budget,
                                  seed=args.seed, max_cost=args.max_cost, timeout=args.timeout,
                                  concurrency=args.concurrency)
    check_prompts(args.prompt)
    mlflow.set_experiment(args.experiment)
    try:
        result = optimize_prompts(predict_fn=predict, train_data=data, prompt_uris=args.prompt,
                                  optimizer=optimizer, scorers=scorers, aggregation=aggregation)
    except RunStopped as exc:
        console.print(f"[yellow]stopped[/]: {escape(str(exc))}", soft_wrap=True)
        return EXIT_STOPPED
    except ModelCallFailed as exc:
        console.print(f"[red]model call failed[/]: {escape(str(exc))}", soft_wrap=True)
        return EXIT_FAILED
    except MlflowException as exc:  # MLflow's own refusal (its checks of the data)
        raise StraTuneError(f"MLflow: {_line(exc)}") from None
    for version in result.optimized_prompts:
        console.print(f"registered {escape(version.name)} version {version.version}: "
                      f"{escape(version.uri)}", soft_wrap=True)
    if result.initial_eval_score is not None and result.final_eval_score is not None:
        console.print(f"score over the records: {result.initial_eval_score:.3f} -> "
                      f"{result.final_eval_score:.3f}; run directory {escape(str(args.out))}")
    return 0
