"""`--task inspect:FILE.py@TASK`: a real Inspect task file (tests/support/inspect_tasks.py) as a
StraTune task, its samples, solvers and scorers run through inspect_ai itself, every model call
(grading calls included) through the run's cache, against the project's fake server; and the
learned skill back as an Inspect task that `inspect_ai.eval` runs."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

inspect_ai = pytest.importorskip("inspect_ai")

import stratune  # noqa: E402
from llm_cache.records import Message, Request, Response, Role  # noqa: E402
from llm_cache.testing.fake_server import FakeAnthropicServer  # noqa: E402
from replay.bridges.inspect_skill import DEFAULT_SKILL  # noqa: E402
from replay.bridges.specs import normalized  # noqa: E402
from replay.tasks.registry import load_task  # noqa: E402
from tests.support import inspect_world as world  # noqa: E402
from tests.support.cli import main  # noqa: E402
from tests.support.inspect_tasks import INITIAL  # noqa: E402
from tests.support.offline import offline  # noqa: E402, F401 (a fixture)
from tests.support.toy import toy_target  # noqa: E402

pytestmark = pytest.mark.usefixtures("offline")  # nothing leaves this machine

MODELS = ["--target", f"anthropic:{world.TARGET}", "--optimizer", f"anthropic:{world.OPTIMIZER}"]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer(responder=world.responder()) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
        yield fake


def _train(name: str, out: Path, *flags: str) -> int:
    return main(["train", "--task", world.spec(name), *MODELS, "--out", str(out), *flags])


def _task(name: str, **options: str):
    query = "&".join(f"{k}={v}" for k, v in options.items())
    return load_task(normalized(world.spec(name) + (f"?{query}" if query else "")))


def test_an_inspect_task_trains_replays_and_reads_back_from_python(server, tmp_path):
    out = tmp_path / "run"
    assert _train("spell", out, "--test-eval") == 0
    run = stratune.load_run(out)
    assert run.manifest.task.spec == normalized(world.spec("spell"))
    assert run.manifest.task.spec.endswith("@spell?test_fraction=0.5&split_seed=0")
    assert run.initial_skill == INITIAL  # the system_message solver's text
    initial = run.view.started.initial_skill_id
    assert run.test_scores[run.final_id] > run.test_scores[initial]
    assert main(["replay", str(out)]) == 0
    paid = len(server.requests)
    result = stratune.optimize(world.spec("spell"), *(), target=MODELS[1], optimizer=MODELS[3],
                               out=out, test_eval=True, progress=False)
    assert len(server.requests) == paid
    assert result.run.manifest.event_digest == run.manifest.event_digest
    # back to Inspect: the exported task runs under inspect_ai.eval with the learned skill
    exported = tmp_path / "learned.py"
    assert main(["export-inspect", str(out), "--output", str(exported)]) == 0
    learned = _accuracy(f"{exported}@spell_stratune", tmp_path / "logs")
    original = _accuracy(f"{world.TASKS}@spell", tmp_path / "logs")
    assert learned[0] > original[0]
    assert learned[1] == run.final_skill and original[1] == INITIAL


def _toy_outputs(messages, tools, tool_choice, config):
    """mockllm's outputs: the toy target on the system and user text (usage set: mockllm
    would otherwise count tokens with a tokenizer it downloads)."""
    from inspect_ai.model import ModelOutput, ModelUsage

    system = "\n".join(m.text for m in messages if m.role == "system")
    user = messages[-1].text
    text = toy_target(Request(role=Role.TARGET, model="mock", system=system,
                              messages=(Message.user(user),), max_tokens=64)).text
    output = ModelOutput.from_content(model="mockllm/model", content=text)
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def _accuracy(task: str, logs: Path) -> tuple[float, str]:
    """The test samples' accuracy under `inspect_ai.eval`, and the system message it sent."""
    (log,) = inspect_ai.eval(task, model="mockllm/model", log_dir=str(logs), display="none",
                             model_args={"custom_outputs": _toy_outputs},
                             sample_id=[f"w{i:02d}" for i in range(3, 40, 4)])
    assert log.status == "success", log.error
    system = next(m for m in log.samples[0].messages if m.role == "system")
    return log.results.scores[0].metrics["accuracy"].value, system.text


def test_samples_become_stratune_samples_with_their_split(server):
    task = _task("spell")
    assert [s.id for s in task.split("test")] == [f"w{i:02d}" for i in range(3, 40, 4)]
    first = task.split("train")[0]
    assert task.describe(first) == "Word: apple [U]"
    assert task.expected(first) == "<answer>APPLE</answer>"
    drawn = _task("spell_unsplit")
    assert len(drawn.split("train")) == len(drawn.split("test")) == 20
    assert [s.id for s in drawn.split("test")] == [s.id for s in _task("spell_unsplit")
                                                   .split("test")]
    other = _task("spell_unsplit", split_seed="1", test_fraction="0.25")
    assert len(other.split("test")) == 10
    assert {s.id for s in other.split("test")} != {s.id for s in drawn.split("test")}
    assert not server.requests


def test_chat_inputs_are_the_prompt_and_a_system_message_is_the_skill(server):
    chat = _task("spell_chat")
    assert chat.info.initial_skill == DEFAULT_SKILL  # no system_message solver
    (request,) = chat.requests("Mind the marker.", chat.split("train")[0], "m")
    assert request.system == "The user names a word.\n\nMind the marker."
    assert [(m.role, m.text()) for m in request.messages] == [("user", "Word: apple [U]")]
    topics = _task("topics")
    assert topics.info.placeholders == (("", ("{topic}",)),)
    (request,) = topics.requests(topics.info.initial_skill, topics.split("train")[0], "m")
    assert request.system == "You answer questions about fruit."


@pytest.mark.parametrize(("name", "replies", "value"), [
    ("spell", ["<answer>APPLE</answer>"], 1.0),
    ("spell", ["<answer>apple</answer>"], 0.0),
    ("spell_chat", ["So: <answer>APPLE</answer> it is"], 1.0),
    ("spell_exact", ["<answer>APPLE</answer>"], 1.0),
    ("spell_exact", ["It is <answer>APPLE</answer>."], 0.0),
    ("capitals", ["ANSWER: B"], 1.0),
    ("capitals", ["ANSWER: A"], 0.0),
    ("spell_graded", ["<answer>APPLE</answer>", "GRADE: C"], 1.0),
    ("spell_graded", ["<answer>apple</answer>", "GRADE: I"], 0.0),
])
def test_inspect_scorers_score_the_targets_reply(name, replies, value):
    task = _task(name)
    sample = task.split("train")[0]
    skill = task.info.initial_skill
    sent = [task.requests(skill, sample, "m")]
    responses: tuple[Response, ...] = ()
    for reply in replies:
        responses += (Response(text=reply),)
        sent.append(task.follow_ups(skill, sample, "m", responses))
    assert [len(wave) for wave in sent] == [1] * len(replies) + [0]
    if name == "spell_graded":  # the grader is the target, asked through the same requests
        grading = sent[1][0].messages[0].text()
        assert "[Expert]: <answer>APPLE</answer>" in grading and replies[0] in grading
    score = task.score(sample, responses)
    assert score.value == value
    assert (score.summary == "") == (value == 1.0)


def test_a_model_graded_scorer_grades_through_the_runs_cache(server, tmp_path):
    assert _train("spell_graded", tmp_path / "run") == 0
    graded = [r for r in server.requests if "[BEGIN DATA]" in str(r.body["messages"])]
    assert graded and all(r.body["model"] == world.TARGET for r in graded)
    paid = len(server.requests)
    assert _train("spell_graded", tmp_path / "run") == 0
    assert len(server.requests) == paid
    assert main(["replay", str(tmp_path / "run")]) == 0


@pytest.mark.parametrize(("spec", "flags", "says"), [
    (world.spec("nope"), [], "no @task named 'nope'; the file has boxed, capitals"),
    ("inspect:tests/support/none.py@spell", [], "none.py not found"),
    (world.spec("boxed"), [], "its samples run in a docker sandbox"),
    (world.spec("needs_sandbox"), [], "cannot run here (ProcessLookupError"),
    (world.spec("own_grader"), [], "grades with model openai/gpt-4o"),
    (world.spec("surrogate_input"), [], "sample 's-3': ['input'] holds a lone surrogate"),
    (world.spec("spell"), ["--scorer", "exact"], "is scored by its own scorer"),
    (world.spec("spell"), ["--placement", "user_prefix"], "skill is its system message"),
    (world.spec("spell") + "?test_fraction=2", [], "test_fraction lies in (0, 1)"),
    (world.spec("spell") + "?shuffle=1", [], "unknown option 'shuffle'"),
])
def test_bad_inspect_tasks_exit_2_before_anything_is_paid(server, tmp_path, capsys, spec, flags,
                                                          says):
    out = tmp_path / "run"
    assert main(["train", "--task", spec, *MODELS, "--out", str(out), *flags]) == 2
    error = capsys.readouterr().err
    assert says in error and len(error.strip().splitlines()) == 1, error
    assert not server.requests and not out.exists()


def test_export_refuses_a_run_of_another_task(tmp_path, capsys):
    trace = Path(__file__).resolve().parents[1] / "traces" / "demo"
    assert main(["export-inspect", str(trace), "--output", str(tmp_path / "x.py")]) == 2
    assert "not an Inspect task" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "x.py")


def test_without_inspect_ai_an_inspect_task_is_one_line_naming_the_extra(server, tmp_path,
                                                                          capsys, monkeypatch):
    for name in [m for m in sys.modules if m.startswith("replay.bridges.inspect")
                 or m == "stratune.inspect"]:
        monkeypatch.delitem(sys.modules, name)  # imported again, as in a fresh process
        package, _, module = name.rpartition(".")
        monkeypatch.delattr(sys.modules[package], module)
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # as if not installed
    assert _train("spell", tmp_path / "run") == 2
    error = capsys.readouterr().err
    assert error.startswith("error: task: inspect: tasks need inspect_ai, which is not "
                            "installed: pip install 'stratune[inspect]'")
    assert main(["export-inspect", str(tmp_path / "run")]) == 2
    assert "export-inspect needs inspect_ai: pip install" in capsys.readouterr().err
    assert not server.requests and not (tmp_path / "run").exists()
    with pytest.raises(ImportError, match=r"^stratune.inspect needs inspect_ai, which is not "
                                          r"installed: pip install 'stratune\[inspect\]'$"):
        importlib.import_module("stratune.inspect")
