"""`stratune.dspy.StraTune`: a two-predictor DSPy program compiled against the project's fake
Anthropic server (the real SDK over HTTP). One execution is one run of the whole program; the
budget, the trace, replay, resume after a kill and `view` work as for any run."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

dspy = pytest.importorskip("dspy")

import stratune  # noqa: E402
from llm_cache.testing.fake_server import FakeAnthropicServer  # noqa: E402
from stratune.dspy import ProgramTask, StraTune  # noqa: E402
from stratune_core.records.errors import TaskDataError  # noqa: E402
from stratune_core.records.parts import SkillParts  # noqa: E402
from tests.support import dspy_world as world  # noqa: E402
from tests.support.cli import ROOT, main  # noqa: E402

TRAIN, VAL = world.examples(20), world.examples(10, 20)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer(responder=world.responder()) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
        yield fake


def _optimizer(out: Path, **options: object) -> StraTune:
    return StraTune(world.metric, target=f"anthropic:{world.TARGET}",
                    optimizer=f"anthropic:{world.OPTIMIZER}", out=out, progress=False,
                    **options)


def _target_calls(fake: FakeAnthropicServer) -> int:
    return sum(1 for r in fake.requests if r.body.get("model") == world.TARGET)


def test_compile_learns_the_instructions_of_a_two_predictor_program(tmp_path, server,
                                                                     capsys) -> None:
    program = world.Spell()
    before = {n: p.signature.instructions for n, p in program.named_predictors()}
    optimizer = _optimizer(tmp_path / "run")
    learned = optimizer.compile(program, trainset=TRAIN, valset=VAL)
    result = optimizer.result
    assert result is not None
    # the same program: same predictors, same fields; only instructions differ, from the parts
    assert type(learned) is world.Spell and learned is not program
    names = [n for n, _ in learned.named_predictors()]
    assert names == ["draft", "answer"]
    for (name, new), (_, old) in zip(learned.named_predictors(), program.named_predictors(),
                                     strict=True):
        assert new.signature.fields.keys() == old.signature.fields.keys()
        assert new.signature.instructions == SkillParts.read(result.final_skill).as_dict()[name]
    assert {n: p.signature.instructions for n, p in program.named_predictors()} == before
    assert any(rule in learned.answer.signature.instructions for rule in world.RULES.values())
    assert result.test_scores is not None
    initial_id = result.run.view.started.initial_skill_id
    assert result.test_scores[result.final_id] > result.test_scores[initial_id]
    # the budget counts runs of the whole program: two target calls each
    assert 0 < result.spent <= result.budget == 6 * len(TRAIN)
    assert 0 < _target_calls(server) <= 2 * (result.spent + 2 * len(VAL))
    # the trace replays offline from Python, and `stratune replay` says how
    assert optimizer.replay(world.Spell(), trainset=TRAIN, valset=VAL).digest == \
        result.run.manifest.event_digest
    assert main(["replay", str(result.trace)]) == 2
    capsys.readouterr()
    assert main(["view", str(result.trace), "--candidate", result.final_id]) == 0
    shown = capsys.readouterr().out
    assert "part draft" in shown and "part answer" in shown  # each predictor's part apart


def test_a_second_call_reads_the_run_back_without_paying(tmp_path, server) -> None:
    first = _optimizer(tmp_path / "run")
    first.compile(world.Spell(), trainset=TRAIN)
    paid = _target_calls(server)
    again = _optimizer(tmp_path / "run")
    learned = again.compile(world.Spell(), trainset=TRAIN)
    assert _target_calls(server) == paid
    assert again.result.run.manifest.event_digest == first.result.run.manifest.event_digest
    assert learned.answer.signature.instructions == \
        SkillParts.read(first.result.final_skill).as_dict()["answer"]


def test_other_examples_are_another_run_not_a_resumption(tmp_path, server) -> None:
    _optimizer(tmp_path / "run", budget=12).compile(world.Spell(), trainset=TRAIN[:6])
    with pytest.raises(stratune.StraTuneError, match="holds a different run: task"):
        _optimizer(tmp_path / "run", budget=12).compile(world.Spell(), trainset=TRAIN[1:7])


def test_a_killed_compile_resumes_to_the_uninterrupted_run(tmp_path, server) -> None:
    """SIGKILL in the middle of a target call (from the server's side), then the same call:
    the events equal those of a run never interrupted."""
    reference = tmp_path / "reference"
    world.compile_into(str(reference))
    killed = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "tests.support.dspy_world", str(killed)]
    child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
    seen = _target_calls(server)
    answer = server.responder
    killing = threading.Lock()

    def kill_at_the_thirtieth(body):  # noqa: ANN001
        if body.get("model") == world.TARGET and _target_calls(server) - seen >= 30:
            with killing:
                if child.poll() is None:
                    os.kill(child.pid, signal.SIGKILL)
        return answer(body)

    server.responder = kill_at_the_thirtieth
    assert child.wait(timeout=300) == -signal.SIGKILL
    server.responder = answer
    assert not (killed / "final_skill.txt").exists()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    for name in ("events.jsonl", "final_skill.txt"):
        assert (killed / name).read_text(encoding="utf-8") == \
            (reference / name).read_text(encoding="utf-8"), name


def test_a_metric_out_of_range_is_one_line_naming_the_sample() -> None:
    task = ProgramTask(world.Spell(), lambda example, prediction, trace=None: 3, name="spell",
                       trainset=TRAIN[:2])
    sample = task.split("train")[0]
    replies = world.run_offline(task, sample)
    with pytest.raises(TaskDataError, match=r"metric: returned 3 for train-0000; return a number"):
        task.score(sample, replies)


def test_examples_without_inputs_are_refused() -> None:
    with pytest.raises(TaskDataError, match=r"trainset\[0\]: give a dspy.Example"):
        ProgramTask(world.Spell(), world.metric, name="spell",
                    trainset=[dspy.Example(Word="apple [U]", answer="APPLE")])


def test_without_dspy_the_import_says_what_to_install() -> None:
    code = "import sys; sys.modules['dspy'] = None; import stratune.dspy"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "ImportError: stratune.dspy needs DSPy, which is not installed: "
        "pip install 'stratune[dspy]'")


class Tooled(dspy.Module):
    def __init__(self) -> None:
        super().__init__()
        self.act = dspy.Predict("Word -> answer")

    def forward(self, Word: str) -> dspy.Prediction:  # noqa: N803
        image = dspy.Image("data:image/png;base64,iVBORw0KGgo=")
        return self.act(Word=image)


def test_a_call_stratune_cannot_send_is_refused_not_scored() -> None:
    task = ProgramTask(Tooled(), world.metric, name="tooled", trainset=TRAIN[:1])
    with pytest.raises(TaskDataError, match="only text inputs"):
        task.requests("", task.split("train")[0], world.TARGET)


def test_the_documented_example_runs(tmp_path, monkeypatch, capsys) -> None:
    """docs/python-api.md's DSPy example against the fake server: a target that multiplies."""
    text = (ROOT / "docs/python-api.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S)
                 if "from stratune.dspy import StraTune" in b)
    with FakeAnthropicServer(responder=world.times_responder()) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
        monkeypatch.chdir(tmp_path)
        exec(compile(block, "docs/python-api.md", "exec"), {})  # noqa: S102
    said = capsys.readouterr().out
    assert "plan -> " in said and "answer -> " in said and "/ 180" in said
    assert (tmp_path / "runs" / "times" / "final_skill.txt").exists()


def test_a_predictors_own_lm_is_not_called() -> None:
    """A predictor bound to its own LM still runs on the run's replies (never on that LM)."""
    program = world.Spell()
    program.draft.lm = dspy.LM("openai/never-called", api_base="http://127.0.0.1:9", cache=False)
    task = ProgramTask(program, world.metric, name="spell", trainset=TRAIN[:1])
    sample = task.split("train")[0]
    replies = world.run_offline(task, sample)
    assert len(replies) == 2 and task.score(sample, replies).value == \
        float(TRAIN[0].answer == TRAIN[0].Word.split()[0])
    assert program.draft.lm is not None  # the caller's program is left as it was
