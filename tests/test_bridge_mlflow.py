"""`stratune.mlflow.StraTuneOptimizer` inside `mlflow.genai.optimize_prompts`, against a real MLflow
tracking store on SQLite with registered prompts, and a predict_fn that calls the project's fake
server through the Anthropic SDK. One execution is one eval_fn call; MLflow registers the
learned templates; the run directory replays without MLflow."""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

mlflow = pytest.importorskip("mlflow")

from mlflow.telemetry import client as telemetry  # noqa: E402

import stratune  # noqa: E402
from llm_cache.testing.fake_server import FakeAnthropicServer  # noqa: E402
from stratune.mlflow import StraTuneOptimizer, optimize_prompts  # noqa: E402
from stratune_core.records.enums import Reason  # noqa: E402
from stratune_core.records.parts import part_names  # noqa: E402
from stratune_core.state.events import (  # noqa: E402
    BatchExecuted,
    CandidateInvalid,
    ExecutionsCharged,
    SkillAdded,
)
from tests.support import mlflow_world as world  # noqa: E402
from tests.support.cli import main  # noqa: E402
from tests.support.offline import offline  # noqa: E402, F401 (a fixture)
from tests.support.toy import ToyOptimizer  # noqa: E402

pytestmark = pytest.mark.usefixtures("offline")  # nothing leaves this machine

RECORDS = world.records(20)
OPTIMIZER = f"anthropic:{world.OPTIMIZER}"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One SQLite tracking store for the module (making its tables takes seconds); each test
    registers prompts of its own names and runs in an experiment of its own."""
    return f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlflow.db'}"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, store: str,
           request: pytest.FixtureRequest) -> Iterator[FakeAnthropicServer]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # MLflow's tracing imports it
    # MLflow's usage telemetry (a user's to turn off, not StraTune's), re-read from the variable
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    telemetry.set_telemetry_client()
    assert telemetry.get_telemetry_client() is None
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(store)
    mlflow.set_experiment(experiment_id=mlflow.create_experiment(
        request.node.name, artifact_location=(tmp_path / "artifacts").as_uri()))
    with FakeAnthropicServer(responder=world.responder()) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
        yield fake
    while mlflow.active_run() is not None:
        mlflow.end_run()
    mlflow.set_tracking_uri(previous)


def _target_calls(fake: FakeAnthropicServer) -> list[str]:
    return [json.dumps(r.body["messages"]) for r in fake.requests
            if r.body.get("model") == world.TARGET]


def _optimize(uri: str, out: Path, **options):
    optimizer = StraTuneOptimizer(optimizer=OPTIMIZER, out=out, progress=False, **options)
    result = mlflow.genai.optimize_prompts(predict_fn=world.predict_fn(uri), train_data=RECORDS,
                                           prompt_uris=[uri], optimizer=optimizer,
                                           scorers=[world.exact])
    return optimizer, result


def test_optimize_prompts_learns_the_template_and_mlflow_registers_it(server, tmp_path):
    prompt = mlflow.genai.register_prompt(name="learn", template=world.TEMPLATE)
    optimizer, result = _optimize(prompt.uri, tmp_path / "run")
    run = optimizer.result
    (learned,) = result.optimized_prompts
    assert (learned.name, learned.version) == ("learn", 2)
    assert learned.template == run.final_skill != world.TEMPLATE
    assert "{{Word}}" in learned.template and learned.variables == {"Word"}
    assert mlflow.genai.load_prompt("prompts:/learn/2").template == learned.template
    # the scores MLflow logs: the initial and final templates on every record, after the run
    evaluation = json.loads((run.trace / "evaluation.json").read_text())
    assert evaluation["split"] == "train" and evaluation["n"] == len(RECORDS)
    assert result.initial_eval_score == pytest.approx(evaluation["scores"][run.run.view.started
                                                                           .initial_skill_id])
    assert result.final_eval_score == pytest.approx(evaluation["scores"][run.final_id])
    assert result.final_eval_score > result.initial_eval_score
    assert result.final_eval_score_per_scorer == {"exact": result.final_eval_score}
    # progress on the active MLflow run, one step per round
    client = mlflow.MlflowClient()
    (mlflow_run,) = client.search_runs([mlflow.get_experiment_by_name(
        "test_optimize_prompts_learns_the_template_and_mlflow_registers_it").experiment_id])
    spent = client.get_metric_history(mlflow_run.info.run_id, "stratune.spent")
    assert len(spent) >= 3 and max(m.value for m in spent) <= run.spent
    assert mlflow_run.data.tags["stratune.run_dir"] == str(run.trace)
    assert mlflow_run.data.metrics["final_eval_score"] == result.final_eval_score
    # each predict_fn call is one execution: the run's, the scoring's new pairs, and MLflow's
    # own check of the predict_fn on the first record
    charged = {p for e in run.run.events if isinstance(e, ExecutionsCharged) for p in e.pairs}
    assert len(charged) == run.spent
    scored = {(skill, f"r{i:04d}") for skill in (run.run.view.started.initial_skill_id,
                                                 run.final_id)
              for i in range(1, len(RECORDS) + 1)}
    assert len(_target_calls(server)) == 1 + run.spent + len(scored - charged)
    # the run directory replays without MLflow, from Python and from the command line
    assert stratune.replay(run.trace).digest == run.run.manifest.event_digest
    assert main(["replay", str(run.trace)]) == 0
    # a rerun pays for nothing twice: only MLflow's own check calls the predict_fn again
    paid = len(_target_calls(server))
    again, second = _optimize(prompt.uri, tmp_path / "run")
    assert len(_target_calls(server)) == paid + 1
    assert again.result.run.manifest.event_digest == run.run.manifest.event_digest
    assert second.optimized_prompts[0].template == learned.template


class _DropsTheVariable(ToyOptimizer):
    """Every candidate is a rewrite that loses `{{Word}}`."""

    def __call__(self, request):
        reply = super().__call__(request)
        if request.system.startswith(("You are the strategy controller", "You diagnose")):
            return reply
        text = "<candidate>\n<form>F4</form>\n<theme>shorter</theme>\n<rewrite>\nAnswer " \
               "briefly: <answer>WORD</answer>.\n</rewrite>\n</candidate>"
        return type(reply)(text=text, usage=reply.usage)


def test_a_candidate_that_drops_a_template_variable_is_never_executed(server, tmp_path):
    server.responder = world.responder(_DropsTheVariable(style="good", form_plan=("F4",)))
    prompt = mlflow.genai.register_prompt(name="drops", template=world.TEMPLATE)
    optimizer, result = _optimize(prompt.uri, tmp_path / "run", config={"max_rounds": 4},
                                  test_eval=False)
    dropped = [e for e in optimizer.result.run.events if isinstance(e, CandidateInvalid)
               and e.reason is Reason.PLACEHOLDER_DROPPED]
    assert dropped and "`{{Word}}` dropped" in dropped[0].detail
    calls = _target_calls(server)
    assert calls and all(re.search(r"Word: \w+ \[[A-Z]\]", call) for call in calls)
    assert result.optimized_prompts[0].template == world.TEMPLATE
    assert result.initial_eval_score is None  # test_eval=False: no scores after the run


def test_several_templates_are_one_skill_with_a_part_per_template_and_message(server, tmp_path):
    mlflow.genai.register_prompt(name="rules", template="Answer with the word.")
    ask = [{"role": "user", "content": "Return the final answer inside <answer>...</answer> "
                                       "tags.\nWord: {{Word}}"}]
    mlflow.genai.register_prompt(name="ask", template=ask)
    optimizer = StraTuneOptimizer(optimizer=OPTIMIZER, out=tmp_path / "run", progress=False)
    result = optimize_prompts(predict_fn=world.predict_two, train_data=world.records(12),
                              prompt_uris=["prompts:/rules/1", "prompts:/ask/1"],
                              optimizer=optimizer, scorers=[world.exact, world.tagged],
                              aggregation=world.weighted)
    run = optimizer.result
    # the aggregation's score is the execution's: 0.2 for a tagged wrong answer, not solved
    batches = [e for e in run.run.events if isinstance(e, BatchExecuted)]
    assert any(abs(e.mean_score * len(e.sample_ids) - e.solved) > 1e-9 for e in batches)
    assert result.initial_eval_score_per_scorer["tagged"] == 1.0
    per = result.final_eval_score_per_scorer
    assert set(per) == {"exact", "tagged"}
    assert result.final_eval_score == pytest.approx(0.8 * per["exact"] + 0.2 * per["tagged"])
    assert part_names(run.initial_skill) == ("rules", "ask/1-user")
    assert all(part_names(e.text) == part_names(run.initial_skill)
               for e in run.run.events if isinstance(e, SkillAdded))
    learned = {v.name: v for v in result.optimized_prompts}
    assert {v.version for v in learned.values()} == {2}
    chat = learned["ask"].template
    assert [m["role"] for m in chat] == ["user"] and "{{Word}}" in chat[0]["content"]
    assert result.final_eval_score > result.initial_eval_score
    assert mlflow.genai.load_prompt("prompts:/ask/2").template == chat


def test_the_command_runs_optimize_prompts_and_refuses_a_missing_prompt(server, store,
                                                                         capsys):
    mlflow.genai.register_prompt(name="words", template=world.TEMPLATE)
    data = Path("words.jsonl")
    data.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    command = ["optimize-prompts", "--predict", "tests.support.mlflow_world:predict",
               "--data", str(data), "--scorer", "tests.support.mlflow_world:exact",
               "--tracking-uri", store, "--optimizer", OPTIMIZER, "--budget", "3x",
               "--experiment", "cli"]
    assert main([*command, "--prompt", "prompts:/nothing/1", "--out", "missing"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: prompt prompts:/nothing/1: not in the Prompt Registry")
    assert len(error.strip().splitlines()) == 1
    assert not server.requests and not Path("missing").exists()
    with pytest.raises(stratune.StraTuneError, match="prompt prompts:/nothing/2: not in"):
        optimize_prompts(predict_fn=world.predict, train_data=RECORDS,
                         prompt_uris=["prompts:/nothing/2"], scorers=[world.exact],
                         optimizer=StraTuneOptimizer(optimizer=OPTIMIZER, out="x"))
    assert main([*command, "--prompt", "prompts:/words/1", "--out", "cli"]) == 0
    shown = capsys.readouterr().out
    assert "registered words version 2: prompts:/words/2" in shown
    assert main(["replay", "cli"]) == 0


def test_without_scorers_or_with_bad_options_nothing_is_executed(server, tmp_path):
    prompt = mlflow.genai.register_prompt(name="unscored", template=world.TEMPLATE)
    with pytest.raises(stratune.StraTuneError, match="called without scorers"):
        mlflow.genai.optimize_prompts(
            predict_fn=world.predict_fn(prompt.uri), train_data=RECORDS,
            prompt_uris=[prompt.uri],
            optimizer=StraTuneOptimizer(optimizer=OPTIMIZER, out=tmp_path / "run"))
    assert len(_target_calls(server)) == 1  # MLflow's own check, before the optimizer
    assert not (tmp_path / "run").exists()
    with pytest.raises(stratune.ConfigError, match="method: StraTuneOptimizer runs StraTune"):
        StraTuneOptimizer(optimizer=OPTIMIZER, out="x", method="gepa")
    with pytest.raises(stratune.ConfigError, match="budgets: not an option"):
        StraTuneOptimizer(optimizer=OPTIMIZER, out="x", budgets="6x")
    assert main(["train", "--task", "demo", "--target", "mlflow:predict_fn", "--optimizer",
                 OPTIMIZER, "--out", str(tmp_path / "cli")]) == 2


def test_without_mlflow_the_command_is_one_line_naming_the_extra(capsys, monkeypatch):
    for name in [m for m in sys.modules if m.startswith("replay.bridges.mlflow_")
                 or m == "stratune.mlflow"]:
        monkeypatch.delitem(sys.modules, name)  # imported again, as in a fresh process
        package, _, module = name.rpartition(".")
        monkeypatch.delattr(sys.modules[package], module)
    monkeypatch.setitem(sys.modules, "mlflow", None)  # as if not installed
    assert main(["optimize-prompts", "--prompt", "prompts:/words/1", "--predict", "m:f",
                 "--data", "d.jsonl", "--scorer", "m:s", "--optimizer", OPTIMIZER,
                 "--out", "run"]) == 2
    assert capsys.readouterr().err == ("error: optimize-prompts needs MLflow >= 3.18: pip "
                                       "install 'stratune[mlflow]'\n")
    with pytest.raises(ImportError, match=r"^stratune.mlflow needs MLflow's prompt optimization "
                                          r"\(mlflow >= 3.18\), which is not installed: pip "
                                          r"install 'stratune\[mlflow\]'$"):
        importlib.import_module("stratune.mlflow")
