"""A real `mlflow server` killed in the middle of a run: the run goes on and finishes as it
would have without tracking, one warning says so, MLflow's HTTP client is held to short limits,
and the MLflow run is closed as FAILED once the server answers again, never left RUNNING."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from benchmarks.common import ToyResponder
from llm_cache.testing.fake_server import FakeAnthropicServer
from replay.commands.app import main as stratune
from replay.tracking.mlflow_runs import RunTracker
from replay.tracking.queue import HTTP_LIMITS
from tests.support.mlflow_server import MlflowServer

mlflow = pytest.importorskip("mlflow")
pytest.importorskip("flask_cors")
from mlflow import MlflowClient  # noqa: E402

pytestmark = pytest.mark.slow
WORDS = Path(__file__).resolve().parents[1] / "examples" / "grid" / "words"


def _train(out: Path, *extra: str) -> int:
    return stratune(["train", "--task", str(WORDS), "--scorer", "regex", "--target",
                     "anthropic:claude-haiku-4-5", "--optimizer", "anthropic:claude-sonnet-4-6",
                     "--out", str(out), "--test-eval", *extra])


class KillAfterFirstRound:
    """The toy models, which kill the MLflow server once it holds a round's metrics, and start
    it again once the run's tracker has seen it dead."""

    def __init__(self, server: MlflowServer, tracking_failed: threading.Event) -> None:
        self.toy = ToyResponder()
        self.server = server
        self.failed = tracking_failed
        self.client = MlflowClient(tracking_uri=server.url)
        self.killed = self.restarted = False
        self.lock = threading.Lock()

    def __call__(self, body: Mapping[str, Any]) -> str:
        with self.lock:
            if not self.killed and self._logged_a_round():
                self.server.kill()
                self.killed = True
            elif self.killed and not self.restarted and self.failed.is_set():
                self.server.start()
                self.restarted = True
        return self.toy(body)

    def _logged_a_round(self) -> bool:
        experiment = self.client.get_experiment_by_name("stratune")
        if experiment is None:
            return False
        runs = self.client.search_runs([experiment.experiment_id])
        return bool(runs) and "spent" in runs[0].data.metrics


@pytest.fixture
def mlflow_server(tmp_path):
    server = MlflowServer(tmp_path / "mlflow")
    server.directory.mkdir()
    yield server.start()
    server.kill()


def test_a_server_killed_mid_run_costs_the_run_nothing(tmp_path, monkeypatch, capsys,
                                                       mlflow_server):
    for name in HTTP_LIMITS:
        monkeypatch.delenv(name, raising=False)
    failed = threading.Event()
    guard = RunTracker._guard

    def watched(self: RunTracker, what: str, fn: Any) -> None:
        guard(self, what, fn)
        if self._failed:
            failed.set()

    monkeypatch.setattr(RunTracker, "_guard", watched)
    responder = KillAfterFirstRound(mlflow_server, failed)
    with FakeAnthropicServer(responder=responder) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
        assert _train(tmp_path / "tracked", "--mlflow", mlflow_server.url) == 0
        assert responder.killed and responder.restarted
        tracked_out = capsys.readouterr().out
        with FakeAnthropicServer(responder=ToyResponder()) as plain:
            monkeypatch.setenv("ANTHROPIC_BASE_URL", plain.url)
            assert _train(tmp_path / "plain") == 0
    # MLflow's HTTP client was held to the short limits while the run went on
    import os

    assert {name: os.environ[name] for name in HTTP_LIMITS} == HTTP_LIMITS
    warnings = [line for line in tracked_out.splitlines() if "MLflow" in line]
    assert len(warnings) == 1 and "the run goes on without tracking" in warnings[0]
    # the same run as without tracking: same events, same final skill
    events = (tmp_path / "tracked" / "events.jsonl").read_text().splitlines()
    assert [json.loads(e)["_type"] for e in events] == [
        json.loads(e)["_type"] for e in (tmp_path / "plain" / "events.jsonl").read_text()
        .splitlines()]
    assert json.loads(events[-1])["final_id"] == json.loads(
        (tmp_path / "plain" / "events.jsonl").read_text().splitlines()[-1])["final_id"]
    assert json.loads(events[-1])["rounds"] >= 2
    # the server came back before the end: the incomplete MLflow run is closed as FAILED
    client = MlflowClient(tracking_uri=mlflow_server.url)
    (run,) = client.search_runs([client.get_experiment_by_name("stratune").experiment_id])
    assert run.info.status == "FAILED"
    assert run.data.params["target"] == "anthropic:claude-haiku-4-5"
    assert "test_score" not in run.data.metrics  # logged after the kill: lost, not replayed
