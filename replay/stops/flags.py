"""The `train` flags that add stop controls and tracking to one run: `--max-cost`, `--timeout`
(with the STOP file, always on) and `--mlflow`. `stratune grid` builds the same pieces once for
all its cells (replay/grid/limits.py)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from attrs import frozen

from replay.commands.arg_types import name
from stratune_core.records.errors import ConfigError, StraTuneError

if TYPE_CHECKING:
    from replay.run.hooks import TrainHooks
    from replay.tracking.mlflow_runs import MlflowSink, RunTracker


def add_flags(parser: argparse.ArgumentParser, *, where: str = "--out") -> None:
    group = parser.add_argument_group("stop controls and tracking")
    group.add_argument("--max-cost", metavar="USD",
                       help="stop before the paid cost would pass USD (price table; counts what "
                            "earlier sittings paid); rerun with a higher cap to continue")
    group.add_argument("--timeout", metavar="DURATION",
                       help="stop after DURATION (90s, 30m, 2h, 1h30m); rerun to continue. "
                            f"`touch {where.strip('-').upper()}/STOP` stops at the next round")
    group.add_argument("--mlflow", metavar="URI",
                       help="log to MLflow: sqlite:///mlflow.db, http://host:5000 or file:DIR "
                            "(pip install -e '.[mlflow]')")
    group.add_argument("--mlflow-experiment", default="stratune", type=name, metavar="NAME")


@frozen
class RunControls:
    hooks: TrainHooks
    tracker: RunTracker | None = None

    def finish(self, code: int) -> None:
        if self.tracker is not None:
            self.tracker.finish(code)


def for_train(args: argparse.Namespace) -> RunControls:
    from llm_cache.gates import CallGate, CostCap, GateChain
    from replay.run.hooks import RoundObserver, TrainHooks
    from replay.stops.control import StopControl, cache_cost, parse_cost
    from replay.tracking.mlflow_runs import RunTracker

    out = Path(args.out)
    stop = StopControl.for_run(out, timeout=args.timeout)
    gates: list[CallGate] = [stop]
    if args.max_cost is not None:
        gates.append(CostCap(parse_cost(args.max_cost), already_usd=cache_cost([out / "cache"])))
    observers: list[RoundObserver] = [stop]
    tracker = None
    if args.mlflow is not None:
        tracker = RunTracker(mlflow_sink(args.mlflow, args.mlflow_experiment), out)
        observers.insert(0, tracker)  # log the round before a stop check may end the run
    return RunControls(TrainHooks(gate=GateChain(gates), observers=tuple(observers)), tracker)


def mlflow_sink(uri: str, experiment: str) -> MlflowSink:
    """The MLflow client for `--mlflow URI`; a URI MLflow cannot use is a one-line error before
    anything is written (MLflow raises its own exception types, with multi-line messages)."""
    from replay.tracking.mlflow_runs import MlflowSink

    try:
        return MlflowSink(uri, experiment)
    except StraTuneError:
        raise
    except Exception as exc:
        scheme = uri.partition(":")[0] if ":" in uri else "(none)"
        raise ConfigError(
            f"--mlflow {uri}: MLflow cannot use this tracking URI (scheme {scheme!r}; "
            f"{type(exc).__name__}); use sqlite:///mlflow.db, http://host:5000 or file:DIR"
        ) from None
