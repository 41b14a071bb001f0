"""`import stratune`: the Python API drives the same code as the command line (a run made
with `optimize` is the run `train` makes), takes tasks as Python rows, reports typed results,
and raises one-line typed errors. Everything runs on the toy world's scripted models."""

from __future__ import annotations

import ast
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import stratune
from llm_cache.backends.function import FunctionBackend
from replay.models import specs as models
from replay.models.specs import ModelKind
from tests.support.cli import ROOT, main, record_in_process, toy_extensions

MODELS = {"target": "scripted:toy-target", "optimizer": "scripted:toy-optimizer"}
ROWS = [(f"Say the word: {w}", w) for w in
        ("apple", "river", "stone", "cloud", "maple", "ember", "frost", "grove", "quill",
         "brook", "cedar", "dune", "fern", "glade", "heath", "inlet", "jade", "knoll",
         "larch", "marsh", "north", "oasis", "pine", "quartz")]


def word_score(answer: str, expected: object) -> float:
    """A scorer importable as tests.test_python_api:word_score."""
    return 1.0 if str(expected).lower() in answer.lower() else 0.0


@pytest.fixture(autouse=True)
def toy_world() -> Iterator[None]:
    with models.using(toy_extensions()):
        yield


def test_optimize_is_the_run_train_makes(tmp_path: Path) -> None:
    """Same task, models, budget and seed: the same events (digest) as `stratune train`,
    and a typed result read from that trace."""
    cli = record_in_process(tmp_path / "cli", seed=3)
    result = stratune.optimize("toy", **MODELS, budget="6x", seed=3, out=tmp_path / "api")
    recorded = stratune.load_run(cli)
    assert result.run.manifest.event_digest == recorded.manifest.event_digest
    assert result.final_skill == (cli / "final_skill.txt").read_text(encoding="utf-8")
    assert result.trace == (tmp_path / "api").resolve() or result.trace == tmp_path / "api"
    assert (result.spent, result.budget) == (recorded.spent, recorded.budget)
    assert result.stop_reason == recorded.stop_reason
    assert [r.number for r in result.trajectory] == list(range(1, len(result.trajectory) + 1))
    assert result.cost.paid_calls > 0 and result.cost.input_tokens > 0
    assert sum(r.accepted for r in result.trajectory) >= 1
    assert result.skill_folder is None


def test_a_finished_run_is_read_back_by_the_same_call(tmp_path: Path) -> None:
    """Calling again with the same arguments resumes: a finished run pays for nothing."""
    first = stratune.optimize("toy", **MODELS, out=tmp_path / "run", config={"max_rounds": 3})
    again = stratune.optimize("toy", **MODELS, out=tmp_path / "run", config={"max_rounds": 3})
    assert again.run.manifest.event_digest == first.run.manifest.event_digest
    assert again.stop_reason == "max_rounds" and len(again.trajectory) == 3


def test_python_rows_with_an_importable_scorer_replay_from_the_command_line(
        tmp_path: Path, capsys) -> None:
    """Rows and a module-level scorer: the rows are recorded in the run directory, and
    `stratune replay` reloads them and re-checks the run without the program."""
    out = tmp_path / "run"
    result = stratune.optimize(ROWS[:20], scorer=word_score, test=ROWS[20:], **MODELS,
                               out=out, budget=200, test_eval=True)
    spec = result.run.manifest.task
    assert spec.scorer == "tests.test_python_api:word_score"
    assert Path(spec.spec).is_relative_to(out.resolve())
    assert (Path(spec.spec) / "train.jsonl").read_text().count("\n") == 20
    assert result.test_scores is not None and result.final_id in result.test_scores
    assert main(["replay", str(out)]) == 0, capsys.readouterr()
    assert "replay OK" in capsys.readouterr().out


def test_a_notebook_scorer_replays_from_python(tmp_path: Path, capsys) -> None:
    """A lambda cannot be imported by `stratune replay`, which says what to do; the API
    replays it when handed the function again."""
    out = tmp_path / "run"
    rows = [{"input": q, "expected": a, "stratum": "even" if i % 2 else "odd"}
            for i, (q, a) in enumerate(ROWS)]
    scorer = lambda answer, expected: 1.0 if expected in answer else 0.0  # noqa: E731
    stratune.optimize(rows, scorer=scorer, **MODELS, out=out, budget=150)
    replayed = stratune.replay(out, scorer=scorer)
    assert replayed.message.startswith("replay OK") and replayed.events
    assert main(["replay", str(out)]) == 2
    assert "stratune.replay(DIR, scorer=...)" in capsys.readouterr().err


def test_other_rows_in_the_same_directory_are_another_run(tmp_path: Path) -> None:
    """The rows' digest is part of the task spec, so changed data cannot resume a run."""
    out = tmp_path / "run"
    stratune.optimize(ROWS, scorer="exact", **MODELS, out=out, budget=150)
    with pytest.raises(stratune.StraTuneError, match="holds a different run: task differ"):
        stratune.optimize(ROWS[:-1], scorer="exact", **MODELS, out=out, budget=150)


def test_errors_are_the_command_lines_one_line(tmp_path: Path, capsys) -> None:
    """A bad budget raises ConfigError with the message `stratune train` prints."""
    with pytest.raises(stratune.ConfigError) as caught:
        stratune.optimize("toy", **MODELS, budget="lots", out=tmp_path / "a")
    assert main(["train", "--task", "toy", "--target", MODELS["target"], "--optimizer",
                 MODELS["optimizer"], "--budget", "lots", "--out", str(tmp_path / "b")]) == 2
    assert capsys.readouterr().err == f"error: {caught.value}\n"
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize(("rows", "named"), [
    ([("q", "a", "extra")], "task row 0: expected a dict or an (input, expected) pair"),
    ([{"input": "q", "expected": "a", "image": "x.png"}], "task row 0: field 'image'"),
    ([{"input": "q"}], "field 'expected': missing"),
    ([{"input": "q", "expected": "a", "split": "dev"}], "field 'split': unknown split"),
    ({"input": "q", "expected": "a"}, "give a list of rows"),
    ([("q", object())], "not JSON data"),
])
def test_bad_rows_name_the_row(tmp_path: Path, rows: object, named: str) -> None:
    with pytest.raises(stratune.StraTuneError) as caught:
        stratune.optimize(rows, **MODELS, out=tmp_path / "run")  # type: ignore[arg-type]
    assert named in str(caught.value) and "\n" not in str(caught.value)
    assert not (tmp_path / "run").exists()


def test_iterate_yields_rounds_then_the_result(tmp_path: Path) -> None:
    """One update per step, spending never falls, the last update holds the result, and
    the run is the one `optimize` makes."""
    updates = list(stratune.iterate("toy", **MODELS, out=tmp_path / "it", seed=3))
    spent = [u.spent for u in updates]
    assert spent == sorted(spent) and updates[-1].result is not None
    assert all(u.result is None for u in updates[:-1])
    result = updates[-1].result
    assert result.spent == spent[-1] == result.budget - (result.budget - result.spent)
    assert result.run.manifest.event_digest == stratune.load_run(
        record_in_process(tmp_path / "cli", seed=3)).manifest.event_digest


def test_leaving_iterate_early_stops_and_the_same_call_resumes(tmp_path: Path) -> None:
    """Breaking out stops the run after the round in progress; `optimize` with the same
    arguments finishes it, equal to an uninterrupted run."""
    out = tmp_path / "it"
    for update in stratune.iterate("toy", **MODELS, out=out, seed=3):
        if update.round >= 2:
            break
    stopped = stratune.load_run(out)
    assert not stopped.finished and stopped.rounds
    result = stratune.optimize("toy", **MODELS, out=out, seed=3)
    whole = record_in_process(tmp_path / "cli", seed=3)
    assert result.run.manifest.event_digest == stratune.load_run(whole).manifest.event_digest


def test_load_run_gives_records_for_a_data_frame(tmp_path: Path) -> None:
    """Events, rounds and candidates as flat rows of plain values."""
    run = stratune.load_run(record_in_process(tmp_path / "run", seed=3))
    events = run.to_records()
    assert len(events) == len(run.events) and events[0]["type"] == "RunStarted"
    assert all(not isinstance(v, dict) for row in events for v in row.values())
    decided = [row for row in events if row["type"] == "StageResult"]
    assert decided and "outcome.stats.gain" in decided[0]
    rounds = run.to_records("rounds")
    assert [r["number"] for r in rounds] == [r.number for r in run.rounds]
    candidates = run.to_records("candidates")
    assert len(candidates) == sum(len(r.candidates) for r in run.rounds)
    assert {c["verdict"] for c in candidates} <= {"accepted", "saved", "rejected_screening",
                                                  "rejected_validation", "unaffordable",
                                                  "not_submitted", None}


def test_evaluate_with_a_baseline(tmp_path: Path) -> None:
    """A learned skill scored against the task's initial skill, per sample."""
    result = stratune.optimize("toy", **MODELS, out=tmp_path / "run", seed=3)
    record = stratune.evaluate(result, task="toy", target=MODELS["target"], baseline="initial",
                               cache_dir=tmp_path / "cache", out=tmp_path / "eval")
    initial, learned = record.skills
    assert initial.label == "initial" and record.baseline == "initial"
    assert len(learned.scores) == record.n and learned.mean > initial.mean
    assert stratune.replay(tmp_path / "eval").events is None  # an evaluation directory


def test_evaluate_python_rows_on_their_test_split(tmp_path: Path) -> None:
    record = stratune.evaluate("Answer with the word only.", task=ROWS[:12], test=ROWS[12:],
                               scorer=word_score, target=MODELS["target"],
                               cache_dir=tmp_path / "cache")
    assert record.n == len(ROWS) - 12 and record.skills[0].label == "skill"


def test_plan_returns_the_plan(tmp_path: Path) -> None:
    plan = stratune.plan("toy", **MODELS, budget="6x")
    assert plan.shape.budget == 6 * 48 and plan.rounds_typical >= 1
    assert "cannot pay for one round" in (stratune.plan("toy", **MODELS, budget=5).warning or "")


def test_optimize_with_a_skill_folder(tmp_path: Path) -> None:
    folder = tmp_path / "toy-skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: toy-skill\ndescription: Toy answers.\n---\n"
                                     "Answer with the word.\n")
    result = stratune.optimize("toy", **MODELS, out=tmp_path / "run", skill=folder)
    assert result.initial_skill == "Answer with the word."
    assert result.skill_folder == tmp_path / "run" / "skill" / "toy-skill"
    assert stratune.read_skill_folder(result.skill_folder).body == result.final_skill.strip()


def test_a_failing_model_raises_model_call_failed(tmp_path: Path) -> None:
    """A model that fails for good: ModelCallFailed with the command's lines; the run keeps
    what it recorded and the same call with a working model resumes it."""
    def gone(request: object) -> object:
        raise RuntimeError("endpoint gone")

    toy = toy_extensions()
    broken = ModelKind(canonical=lambda body: "toy-target",
                       backend=lambda body: FunctionBackend(gone, name=body))
    out = tmp_path / "run"
    with models.using(models.Extensions(models={**toy.models, "broken": broken},
                                        tasks=toy.tasks)), \
            pytest.raises(stratune.ModelCallFailed) as caught:
        stratune.optimize("toy", target="broken:toy-target", optimizer=MODELS["optimizer"],
                          out=out)
    message = str(caught.value)
    assert message.startswith("model call failed: ") and "endpoint gone" in message
    assert message.endswith("run the same command to resume") and "\n" not in message
    assert (out / "manifest.json").is_file()


def test_an_unknown_model_kind_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(stratune.ConfigError, match="scripted model 'nope'"):
        stratune.optimize("toy", target="scripted:nope", optimizer=MODELS["optimizer"],
                          out=tmp_path / "run")


def test_quiet_off_a_terminal(tmp_path: Path, capsys) -> None:
    """Not on a terminal, `optimize` prints nothing."""
    stratune.optimize("toy", **MODELS, out=tmp_path / "run", config={"max_rounds": 2})
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_the_public_module_only_re_exports() -> None:
    """stratune/ defines nothing: every name comes from stratune_core, llm_cache or replay."""
    for path in (ROOT / "stratune").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            assert isinstance(node, ast.Import | ast.ImportFrom | ast.Assign | ast.Expr), \
                f"{path}:{node.lineno}: {type(node).__name__} in the public module"
    assert set(stratune.__all__) <= set(dir(stratune))


@pytest.mark.slow
def test_the_wheel_carries_the_public_module(tmp_path: Path) -> None:
    """`pip install .` gives an importable `stratune`: the wheel holds the package and
    depends on pyyaml."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "-q", "-w", str(tmp_path), str(ROOT)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    wheel, = tmp_path.glob("stratune-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        meta = next(n for n in names if n.endswith("METADATA"))
        metadata = archive.read(meta).decode()
    assert "stratune/__init__.py" in names and "replay/api/training.py" in names
    assert "Requires-Dist: pyyaml" in metadata



@pytest.mark.parametrize("doc", ["README.md", "docs/python-api.md"])
def test_the_documented_example_runs(doc: str, tmp_path: Path, monkeypatch, capsys) -> None:
    """The Python example of the README and of docs/python-api.md, with the scripted models
    in place of the Anthropic ones."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    # the complete example: the agents sketch beside it elides its models (`target=...`)
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S)
                 if "stratune.optimize(" in b and "target=..." not in b)
    code = block.replace('"anthropic:claude-haiku-4-5"', f'"{MODELS["target"]}"').replace(
        '"anthropic:claude-sonnet-4-6"', f'"{MODELS["optimizer"]}"')
    assert code.count("scripted:") == 2
    monkeypatch.chdir(tmp_path)
    exec(compile(code, doc, "exec"), {})  # noqa: S102
    final = (tmp_path / "runs" / "sums" / "final_skill.txt").read_text(encoding="utf-8")
    assert final.strip() in capsys.readouterr().out


def test_errors_carry_no_secret(tmp_path: Path) -> None:
    """A key in a model spec is masked in the raised message, as on the command line."""
    with pytest.raises(stratune.StraTuneError) as caught:
        stratune.optimize("toy", target="anthropic:claude-haiku-4-5?api_key=sk-ant-FAKE123&x=1",
                          optimizer=MODELS["optimizer"], out=tmp_path / "run")
    assert "sk-ant-FAKE123" not in str(caught.value) and "***" in str(caught.value)


def test_a_stop_file_raises_run_stopped_and_the_same_call_resumes(tmp_path: Path) -> None:
    """OUT/STOP ends the run at its first round boundary with the command's line; without
    the file the same call finishes it, equal to an uninterrupted run."""
    out = tmp_path / "run"
    out.mkdir()
    (out / "STOP").touch()
    with pytest.raises(stratune.RunStopped, match=r"^stopped: .*STOP"):
        stratune.optimize("toy", **MODELS, out=out, seed=3)
    assert not stratune.load_run(out).finished
    (out / "STOP").unlink()
    result = stratune.optimize("toy", **MODELS, out=out, seed=3)
    whole = stratune.load_run(record_in_process(tmp_path / "cli", seed=3))
    assert result.run.manifest.event_digest == whole.manifest.event_digest


@pytest.mark.parametrize("timeout", [0.001, "0.001s"], ids=["seconds", "text"])
def test_a_timeout_raises_run_stopped_and_the_same_call_resumes(tmp_path: Path,
                                                                 timeout: float | str) -> None:
    """`timeout=` is `--timeout`: past it the run stops at a round boundary with the
    command's line, keeps what it paid for (the cache and the trace), and the same call
    without it finishes a run equal to an uninterrupted one, paying for no call twice."""
    out = tmp_path / "run"
    with pytest.raises(stratune.RunStopped, match=r"^stopped: --timeout .* reached"):
        stratune.optimize("toy", **MODELS, out=out, seed=3, timeout=timeout)
    stopped = stratune.load_run(out)
    assert not stopped.finished
    result = stratune.optimize("toy", **MODELS, out=out, seed=3)
    whole = stratune.load_run(record_in_process(tmp_path / "cli", seed=3))
    assert result.run.manifest.event_digest == whole.manifest.event_digest
    assert result.spent == whole.spent


def test_a_bad_timeout_is_a_config_error_before_anything_is_written(tmp_path: Path) -> None:
    """A timeout that is not a duration raises the documented ConfigError, writing nothing."""
    for bad in (0, -1, float("nan"), "soon"):
        with pytest.raises(stratune.ConfigError, match="timeout"):
            stratune.optimize("toy", **MODELS, out=tmp_path / "run", timeout=bad)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(("method", "generator"), [("textgrad", None), ("iter-cot", None),
                                                   ("stratune", "skillopt")])
def test_optimize_runs_baselines_and_hybrids_as_train_does(tmp_path: Path, capsys,
                                                           method: str,
                                                           generator: str | None) -> None:
    """`method=` and `generator=` are `--method` and `--generator`: the same events."""
    flags = ["--method", method] + (["--generator", generator] if generator else [])
    assert main(["train", "--task", "toy", "--target", MODELS["target"], "--optimizer",
                 MODELS["optimizer"], "--limit", "24", *flags, "--out",
                 str(tmp_path / "cli")]) == 0
    capsys.readouterr()
    result = stratune.optimize("toy", **MODELS, limit=24, method=method, generator=generator,
                               out=tmp_path / "api", progress=False)
    recorded = stratune.load_run(tmp_path / "cli")
    assert result.run.manifest.event_digest == recorded.manifest.event_digest
    assert result.run.manifest.method == recorded.manifest.method
    assert (result.spent, result.budget) == (recorded.spent, recorded.budget)


BAD_ARGUMENTS = {
    "out empty": ({"out": ""}, "out"),
    "out blank": ({"out": "   "}, "out"),
    "seed not a number": ({"seed": "1"}, "seed"),
    "seed a bool": ({"seed": True}, "seed"),
    "concurrency 0": ({"concurrency": 0}, "concurrency"),
    "limit 0": ({"limit": 0}, "limit"),
    "budget a list": ({"budget": [6]}, "budget"),
    "target not a string": ({"target": 3}, "target"),
    "unknown method": ({"method": "nope"}, "method"),
    "unknown generator": ({"generator": "nope"}, "generator"),
    "a baseline with a profile": ({"method": "textgrad", "profile": "released"}, "profile"),
    "a baseline with a selector": ({"method": "textgrad", "config": {"selector": "fixed:I1"}},
                                   "selector"),
    "a hybrid with a selector": ({"generator": "gepa", "config": {"selector": "fixed:I1"}},
                                 "selector"),
    "gepa on a budget of 1": ({"method": "gepa", "budget": 1}, "budget"),
    "an empty api_key": ({"target": "anthropic:claude-haiku-4-5?api_key="}, "api_key"),
}


@pytest.mark.parametrize("name", sorted(BAD_ARGUMENTS))
def test_bad_arguments_raise_documented_errors_before_anything_is_written(
        tmp_path: Path, name: str) -> None:
    """`out=""` is refused as `--out ''` is (it would write into the current directory), and
    every bad argument raises `ConfigError` naming it, never a TypeError from inside."""
    given, names = BAD_ARGUMENTS[name]
    arguments = {**MODELS, "out": tmp_path / "run", "progress": False, **given}
    before = sorted(Path.cwd().iterdir())
    with pytest.raises(stratune.ConfigError) as caught:
        stratune.optimize("toy", **arguments)
    assert names in str(caught.value) and "\n" not in str(caught.value)
    assert not (tmp_path / "run").exists()
    assert sorted(Path.cwd().iterdir()) == before


def test_evaluate_refuses_an_empty_out(tmp_path: Path) -> None:
    with pytest.raises(stratune.ConfigError, match="out"):
        stratune.evaluate("Answer with the word.", task="toy", target=MODELS["target"], out="")
