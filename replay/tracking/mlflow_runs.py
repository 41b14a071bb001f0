"""`--mlflow URI`: log a run (or every cell of a grid) to MLflow. Nothing is logged unless asked.

One MLflow run per run directory, found again by a tag on resume (so a resumed or re-run cell
continues its MLflow run instead of opening a second one):
- params: the effective `Config` (`config.<field>`), the model specs, task, seed and profile;
- per-round metrics with step = round: `spent`, `batch_score` (the current skill on the round's
  batch), `accepted` (in that round) and `accepted_total`;
- final metrics: `test_score`, `initial_test_score`, `rounds`, `spent_final` (with the
  final selection), and per call kind
  `tokens_in.<kind>`, `tokens_out.<kind>`, `cost_usd.<kind>` plus `cost_usd` (what was paid,
  as `view` reports it), and `cache_value_usd.<kind>` plus `cache_value_usd` (what the calls
  answered from the cache would have cost at the usage they were recorded with);
- artifacts: final_skill.txt, events.jsonl, usage.json, manifest.json, evaluation.json.

URIs: `sqlite:///path/mlflow.db` (artifacts beside the database in `mlartifacts/`), an MLflow
server `http://host:5000`, or a file store `file:/path/mlruns` (MLflow itself refuses the file
store unless MLFLOW_ALLOW_FILE_STORE=true, which a `file:` URI sets). Tracking is best effort and off the run's path
(`tracking_queue`): rounds are logged by a background thread through a bounded queue, MLflow's
HTTP client gets short timeouts and one retry, and the end of a run waits a bounded time for
the queue. An MLflow error is reported once per run and the (paid) run goes on; its MLflow run
is then closed as FAILED (if the server answers again by the end), never left RUNNING.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import xxhash

from llm_cache.accounting import Accounting
from replay.rundir.serde import manifest_to_data
from replay.rundir.trace import RunDir
from replay.tracking.queue import FINISH_WAIT_S, TrackingQueue, bound_mlflow_http
from stratune_core.records.enums import Verdict
from stratune_core.records.errors import ConfigError
from stratune_core.state.candidate_events import CandidateDecided
from stratune_core.state.events import BatchExecuted, Event
from stratune_core.state.state import State

KEY_TAG = "stratune.run_key"
ARTIFACTS = ("final_skill.txt", "events.jsonl", "usage.json", "manifest.json", "evaluation.json")
STATUS = {0: "FINISHED", 3: "KILLED", 130: "KILLED"}


def _mlflow() -> Any:
    try:
        import mlflow  # noqa: F401
        from mlflow import MlflowClient
    except ImportError:
        raise ConfigError("--mlflow needs MLflow: pip install -e '.[mlflow]'") from None
    return MlflowClient


class MlflowSink:
    """One client for one tracking URI, shared by every run of a process (SQLite stores do
    not like concurrent writers, so calls are serialised here)."""

    def __init__(self, uri: str, experiment: str = "stratune") -> None:
        if not experiment.strip():
            raise ConfigError("--mlflow-experiment: empty; give a name (default: stratune)")
        client_class = _mlflow()
        if uri.startswith("file:"):
            # MLflow 3 refuses its file store unless this is set; `file:DIR` is a form we
            # document, so asking for it is the opt-in
            os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
        bound_mlflow_http()
        self.uri = uri
        self.client = client_class(tracking_uri=uri)
        self.lock = threading.Lock()
        self.experiment_name = experiment
        self._experiment_id: str | None = None

    def experiment_id(self) -> str:
        if self._experiment_id is None:
            found = self.client.get_experiment_by_name(self.experiment_name)
            if found is not None:
                self._experiment_id = found.experiment_id
            else:
                self._experiment_id = self.client.create_experiment(
                    self.experiment_name, artifact_location=_artifact_location(self.uri))
        return self._experiment_id


def _artifact_location(uri: str) -> str | None:
    """Beside a SQLite database, not in the current directory (MLflow's default)."""
    if uri.startswith("sqlite:///"):
        return (Path(uri.removeprefix("sqlite:///")).resolve().parent / "mlartifacts").as_uri()
    return None


def flat_params(manifest_data: Mapping[str, Any]) -> dict[str, str]:
    params = {f"config.{k}": json.dumps(v) if not isinstance(v, str) else v
              for k, v in sorted(manifest_data["config"].items())}
    task = manifest_data["task"]
    params.update({"target": manifest_data["target"], "optimizer": manifest_data["optimizer"],
                   "task": task["spec"], "task.limit": str(task.get("limit")),
                   "task.scorer": str(task.get("scorer")), "seed": str(manifest_data["seed"]),
                   "profile": manifest_data["profile"]})
    return params


def round_metrics(state: State, events: Sequence[Event]) -> dict[str, float]:
    batch = next((e for e in events if isinstance(e, BatchExecuted)), None)
    accepted = sum(1 for e in events
                   if isinstance(e, CandidateDecided) and e.verdict is Verdict.ACCEPTED)
    metrics = {"spent": float(state.budget.spent), "accepted": float(accepted)}
    if batch is not None:
        metrics["batch_score"] = batch.mean_score
    return metrics


def final_metrics(usage: Mapping[str, Any] | None, evaluation: Mapping[str, Any] | None,
                  manifest_data: Mapping[str, Any], finished: Mapping[str, Any]) -> dict[str, float]:
    metrics: dict[str, float] = {"rounds": finished["rounds"], "spent_final": finished["spent"]}
    for row in (usage or {}).get("rows", []):
        kind = row["kind"]
        tokens = [row["usage"], row["cached_usage"]]
        metrics[f"tokens_in.{kind}"] = metrics.get(f"tokens_in.{kind}", 0.0) + sum(
            u["input_tokens"] + u["cache_read_tokens"] + u["cache_write_tokens"] for u in tokens)
        metrics[f"tokens_out.{kind}"] = metrics.get(f"tokens_out.{kind}", 0.0) + sum(
            u["output_tokens"] for u in tokens)
        # What was paid, as `view` reports it; what the cache hits would have cost apart.
        for name, value in (("cost_usd", row["cost_usd"]),
                            ("cache_value_usd", row["would_have_cost_usd"])):
            metrics[f"{name}.{kind}"] = metrics.get(f"{name}.{kind}", 0.0) + value
            metrics[name] = metrics.get(name, 0.0) + value
    if evaluation is not None:
        scores = evaluation.get("scores", {})
        if manifest_data.get("final_id") in scores:
            metrics["test_score"] = scores[manifest_data["final_id"]]
        initial = finished.get("initial_id")
        if initial in scores:
            metrics["initial_test_score"] = scores[initial]
    return metrics


class RunTracker:
    """A round observer for `runner.train` plus `finish` for after it returns."""

    def __init__(self, sink: MlflowSink, run_dir: str | Path, *, run_name: str | None = None,
                 tags: Mapping[str, str] | None = None, warn: Any = print,
                 finish_wait_s: float = FINISH_WAIT_S) -> None:
        self.sink = sink
        self.run_dir = RunDir.at(Path(run_dir).resolve())
        self.run_name = run_name or self.run_dir.path.name
        self.tags = dict(tags or {})
        self.warn = warn
        self.run_id: str | None = None
        self._logged_step = 0
        self._failed = False
        self._finish_wait_s = finish_wait_s
        self._queue = TrackingQueue()

    def _guard(self, what: str, fn: Any) -> None:
        if self._failed:
            return
        try:
            with self.sink.lock:
                fn()
        except Exception as exc:  # tracking must never end a paid run
            self._failed = True
            said = str(exc).splitlines()[0] if str(exc) else ""
            said = said if len(said) <= 160 else said[:157] + "..."
            self.warn(f"warning: MLflow {what} failed for {self.run_dir.path} "
                      f"({type(exc).__name__}: {said}); the run goes on without tracking")

    def _start(self) -> None:
        from mlflow.entities import Param, RunTag

        manifest = self.run_dir.read_manifest()
        data = manifest_to_data(manifest)
        # The resume identity `train` itself uses: transport options may change between sittings.
        identity = manifest.run_identity()
        key = xxhash.xxh3_64_hexdigest(json.dumps([str(self.run_dir.path), identity],
                                                  sort_keys=True).encode())
        client, experiment = self.sink.client, self.sink.experiment_id()
        found = client.search_runs([experiment], filter_string=f"tags.`{KEY_TAG}` = '{key}'",
                                   max_results=1)
        if found:
            self.run_id = found[0].info.run_id
            client.update_run(self.run_id, status="RUNNING")
            history = client.get_metric_history(self.run_id, "spent")
            self._logged_step = max((m.step for m in history), default=0)
            return
        tags = {KEY_TAG: key, "stratune.run_dir": str(self.run_dir.path),
                "git_revision": str(data.get("git_revision")), **self.tags}
        run = client.create_run(experiment, run_name=self.run_name, tags=tags)
        self.run_id = run.info.run_id
        client.log_batch(self.run_id, params=[Param(k, v) for k, v in flat_params(data).items()],
                         tags=[RunTag("packages", json.dumps(data.get("packages", [])))])

    def after_round(self, state: State, events: Sequence[Event], accounting: Accounting) -> None:
        """Hand the round's metrics to the background queue; never waits for MLflow."""
        if state.finished:
            return
        metrics = round_metrics(state, events)
        metrics["accepted_total"] = float(sum(state.accepted_per_epoch))
        step, now = state.round, int(time.time() * 1000)
        if not self._queue.submit(lambda: self._log_round(step, now, metrics)) \
                and self._queue.dropped == 1:
            self.warn(f"warning: MLflow is behind for {self.run_dir.path}; rounds are dropped "
                      "from tracking while its queue is full")

    def _log_round(self, step: int, now: int, metrics: Mapping[str, float]) -> None:
        if self.run_id is None:
            self._guard("start", self._start)
        if self.run_id is None or step <= self._logged_step:
            return
        from mlflow.entities import Metric

        self._logged_step = step
        batch = [Metric(k, v, now, step) for k, v in metrics.items()]
        self._guard("logging", lambda: self.sink.client.log_batch(self.run_id, metrics=batch))

    def finish(self, code: int) -> None:
        """After `runner.train` returned `code`: final metrics and artifacts, then the status;
        waits for the queue at most `finish_wait_s`."""
        self._queue.submit(lambda: self._close(code))
        if not self._queue.close(self._finish_wait_s):
            self.warn(f"warning: MLflow did not take {self.run_dir.path}'s tracking within "
                      f"{self._finish_wait_s:.0f} s; the run is complete, its MLflow run is not")

    def _close(self, code: int) -> None:
        if self.run_id is None:
            return
        if not self._failed:
            self._guard("finish", lambda: self._finish(code))
        if self._failed:
            try:  # one attempt: the server may answer again by now
                with self.sink.lock:
                    self.sink.client.set_terminated(self.run_id, status="FAILED")
            except Exception:  # already reported once; the run itself is complete
                pass

    def _finish(self, code: int) -> None:
        from mlflow.entities import Metric

        client, run_dir = self.sink.client, self.run_dir
        data = manifest_to_data(run_dir.read_manifest())
        lines = run_dir.read_lines()
        if code == 0 and data.get("finished") and lines:
            finished = json.loads(lines[-1])
            first = json.loads(lines[0])
            finished["initial_id"] = first.get("initial_skill_id")
            metrics = final_metrics(run_dir.read_json(run_dir.usage),
                                    run_dir.read_json(run_dir.evaluation), data, finished)
            now = int(time.time() * 1000)
            client.log_batch(self.run_id, metrics=[Metric(k, float(v), now, finished["rounds"])
                                                   for k, v in metrics.items()])
            for name in ARTIFACTS:
                if (run_dir.path / name).is_file():
                    client.log_artifact(self.run_id, str(run_dir.path / name))
        client.set_terminated(self.run_id, status=STATUS.get(code, "FAILED"))
