"""`--mlflow`: a run is logged to a real local MLflow store (SQLite, and the file store) with its
params, per-round metrics, final metrics and artifacts; a resumed run continues its MLflow run
without logging a round twice; nothing is logged unless asked."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from benchmarks.common import ToyResponder
from llm_cache.testing.fake_server import FakeAnthropicServer
from replay.commands.app import main as stratune
from replay.grid.grid_file import load_grid
from replay.grid.run import GridOptions, run_grid
from tests.grid_support import ScriptedEnv, write_grid

mlflow = pytest.importorskip("mlflow")
from mlflow import MlflowClient  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
WORDS = ROOT / "examples" / "grid" / "words"


def _train(out: Path, *extra: str) -> int:
    return stratune(["train", "--task", str(WORDS), "--scorer", "regex", "--target",
                     "anthropic:claude-haiku-4-5", "--optimizer", "anthropic:claude-sonnet-4-6",
                     "--out", str(out), "--test-eval", *extra])


def _events(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]


def test_a_run_is_logged_and_its_resume_continues_the_same_mlflow_run(tmp_path, monkeypatch):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    out = tmp_path / "run"
    with FakeAnthropicServer(responder=ToyResponder()) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
        assert _train(out, "--mlflow", uri, "--max-cost", "0.27") == 3  # stopped mid-run
        client = MlflowClient(tracking_uri=uri)
        experiment = client.get_experiment_by_name("stratune")
        (first,) = client.search_runs([experiment.experiment_id])
        assert first.info.status == "KILLED"
        assert _train(out, "--mlflow", uri) == 0
    (run,) = client.search_runs([experiment.experiment_id])
    assert run.info.run_id == first.info.run_id and run.info.status == "FINISHED"
    manifest = json.loads((out / "manifest.json").read_text())
    params = run.data.params
    assert params["target"] == "anthropic:claude-haiku-4-5" and params["seed"] == "0"
    assert params["config.selector"] == "llm" and params["config.eps_v"] == "0.01"
    assert params["config.target_model"] == manifest["config"]["target_model"]

    events = _events(out)
    finished = events[-1]
    spent_after: dict[int, int] = {}
    for event in events:
        if event["_type"] == "RoundStarted":
            current = event["round"] + 1
            spent_after[current] = event["spent"]  # a round that executes nothing keeps it
        if event["_type"] == "ExecutionsCharged" and event["round"] == current - 1:
            spent_after[current] = event["spent"]
    history = client.get_metric_history(run.info.run_id, "spent")
    per_round = sorted((m.step, m.value) for m in history if m.step <= finished["rounds"])
    logged_rounds = [step for step, _ in per_round]
    assert len(logged_rounds) == len(set(logged_rounds))  # resumed rounds not logged twice
    assert dict(per_round[:len(spent_after)]) == {k: float(v) for k, v in spent_after.items()
                                                  if k in dict(per_round)}
    accepted = client.get_metric_history(run.info.run_id, "accepted_total")
    assert max(m.value for m in accepted) == sum(
        1 for e in events if e["_type"] == "CandidateDecided" and e["verdict"] == "accepted")

    metrics = run.data.metrics
    evaluation = json.loads((out / "evaluation.json").read_text())
    assert metrics["test_score"] == pytest.approx(evaluation["scores"][finished["final_id"]])
    assert metrics["initial_test_score"] == pytest.approx(
        evaluation["scores"][events[0]["initial_skill_id"]])
    usage = json.loads((out / "usage.json").read_text())
    target_out = sum(r["usage"]["output_tokens"] + r["cached_usage"]["output_tokens"]
                     for r in usage["rows"] if r["kind"] == "target_execution")
    assert metrics["tokens_out.target_execution"] == target_out
    # cost_usd is what was paid (what `view` calls paid); the cache hits' value apart
    assert metrics["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in usage["rows"]))
    cached = sum(r["would_have_cost_usd"] for r in usage["rows"])
    assert cached > 0 and metrics["cache_value_usd"] == pytest.approx(cached)
    assert metrics["cost_usd.target_execution"] == pytest.approx(sum(
        r["cost_usd"] for r in usage["rows"] if r["kind"] == "target_execution"))
    names = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert names == {"final_skill.txt", "events.jsonl", "usage.json", "manifest.json",
                     "evaluation.json"}
    assert (tmp_path / "mlartifacts").is_dir()  # beside the database, not in the cwd


def test_every_grid_cell_is_logged_to_a_file_store(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    uri = (tmp_path / "mlruns").as_uri()
    path = write_grid(tmp_path / "grid.toml", ablations='full = {}\ni1 = { selector = "fixed:I1" }\n')
    result = run_grid(load_grid(path), tmp_path / "out", Console(file=io.StringIO()),
                      env=ScriptedEnv(), options=GridOptions(mlflow=uri, mlflow_experiment="g"))
    assert result.code == 0
    client = MlflowClient(tracking_uri=uri)
    runs = client.search_runs([client.get_experiment_by_name("g").experiment_id])
    assert sorted(r.info.run_name for r in runs) == sorted(s.id for s in result.statuses)
    for run in runs:
        cell = tmp_path / "out" / run.info.run_name
        evaluation = json.loads((cell / "evaluation.json").read_text())
        final = _events(cell)[-1]["final_id"]
        assert run.data.tags["grid.ablation"] in ("full", "i1")
        assert run.data.metrics["test_score"] == pytest.approx(evaluation["scores"][final])
        assert run.info.status == "FINISHED"


def test_nothing_is_logged_unless_asked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_grid(tmp_path / "grid.toml", ablations="full = {}\n", seeds="[0]")
    assert run_grid(load_grid(path), tmp_path / "out", Console(file=io.StringIO()),
                    env=ScriptedEnv()).code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.toml", "out"]
