"""`load_task`: dispatch by spec, and bad input reported once with file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.tasks import load_task
from stratune_core.records.errors import ConfigError, StraTuneError, TaskDataError
from stratune_core.records.task import Task

GOOD = [
    {"id": "a", "input": "q1", "expected": "A", "split": "train"},
    {"id": "b", "input": "q2", "expected": "B", "split": "train"},
    {"id": "c", "input": "q3", "expected": "C", "split": "test"},
]


def _write(path: Path, rows: list[object]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_demo_and_custom_are_tasks(tmp_path: Path) -> None:
    """Every spec kind returns an object satisfying the Task protocol."""
    assert isinstance(load_task("demo", limit=3), Task)
    assert len(load_task("demo", limit=3).split("train")) == 3
    custom = load_task(str(_write(tmp_path / "t.jsonl", GOOD)), scorer="choice")
    assert isinstance(custom, Task) and len(custom.split("test")) == 1


@pytest.mark.parametrize(
    ("rows", "pattern"),
    [
        ([GOOD[0], '{"id": "x", "input": ', GOOD[2]], r"t\.jsonl:2: invalid JSON"),
        ([GOOD[0], {"id": "x", "expected": "A", "split": "train"}, GOOD[2]], r"t\.jsonl:2: field 'input': missing"),
        ([GOOD[0], GOOD[1], {"id": "y", "input": "q", "expected": "F", "split": "test"}],
         r"t\.jsonl:3: field 'expected': unknown label 'F'"),
        ([GOOD[0], {"id": "z", "input": "q", "expected": "A", "split": "dev"}, GOOD[2]],
         r"t\.jsonl:2: field 'split': unknown split 'dev'"),
        ([GOOD[0], GOOD[1]], r"t\.jsonl: empty split 'test'; field 'split'"),
        ([GOOD[0], GOOD[0], GOOD[2]], r"t\.jsonl:2: field 'id': 'a' repeats line 1"),
        ([GOOD[0], {"id": "n", "input": 5, "expected": "A", "split": "train"}, GOOD[2]],
         r"t\.jsonl:2: field 'input': expected str, got int"),
    ],
)
def test_bad_custom_input_names_file_line_field(tmp_path: Path, rows: list[object], pattern: str) -> None:
    """Each defect raises one TaskDataError naming file, line and field; nothing is returned."""
    path = _write(tmp_path / "t.jsonl", rows)
    with pytest.raises(TaskDataError, match=pattern) as info:
        load_task(str(path), scorer="choice")
    assert "\n" not in str(info.value)


def test_bad_livemath_label(tmp_path: Path) -> None:
    """A benchmark label outside the task's choices names labels.jsonl, its line and field."""
    folder = tmp_path / "LiveMathematicianBench/train"
    folder.mkdir(parents=True)
    choices = [{"label": x, "text": x} for x in "ABC"]
    _write(folder / "tasks.jsonl", [{"id": "1", "month": "m", "question": "q", "choices": choices}])
    _write(folder / "labels.jsonl", [{"id": "1", "correct_label": "E", "correct_text": ""}])
    (folder / "task_ids.json").write_text('["1"]')
    with pytest.raises(TaskDataError, match=r"labels\.jsonl:1: field 'correct_label': unknown label 'E'"):
        load_task("livemath", data_dir=tmp_path)


def test_empty_benchmark_split(tmp_path: Path) -> None:
    folder = tmp_path / "LiveMathematicianBench/train"
    folder.mkdir(parents=True)
    (folder / "task_ids.json").write_text("[]")
    with pytest.raises(TaskDataError, match=r"task_ids\.json: empty split"):
        load_task("livemath", data_dir=tmp_path)


def test_data_dir_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without data_dir the loader reads STRATUNE_DATA; without either it says what to do."""
    monkeypatch.delenv("STRATUNE_DATA", raising=False)
    with pytest.raises(TaskDataError, match="pass --data DIR or set STRATUNE_DATA"):
        load_task("mind2web")
    monkeypatch.setenv("STRATUNE_DATA", str(tmp_path))
    with pytest.raises(TaskDataError, match=str(tmp_path / "Mind2Web/train/tasks.jsonl")):
        load_task("mind2web")


def test_bad_specs() -> None:
    with pytest.raises(ConfigError, match="unknown task 'nope'"):
        load_task("nope")
    with pytest.raises(ConfigError, match="only custom JSONL tasks take a scorer"):
        load_task("demo", scorer="exact")
    with pytest.raises(ConfigError, match="limit: must be >= 1"):
        load_task("demo", limit=0)
    with pytest.raises(ConfigError, match="placement: unknown value 'middle'"):
        load_task("demo", placement="middle")
    with pytest.raises(ConfigError, match="unknown option 'size'"):
        load_task("reasoning-gym:leg_counting?size=3")


def test_errors_share_one_family(tmp_path: Path) -> None:
    with pytest.raises(StraTuneError):
        load_task(str(tmp_path / "missing.jsonl"))


def test_reasoning_gym_task() -> None:
    """A reasoning-gym dataset loads offline and its verifier grades answers."""
    pytest.importorskip("reasoning_gym")
    from llm_cache.records import Response

    task = load_task("reasoning-gym:leg_counting?n_train=4&n_test=3&seed=5")
    assert len(task.split("train")) == 4 and len(task.split("test")) == 3
    sample = task.split("test")[0]
    gold = task.expected(sample)
    assert task.score(sample, (Response(text=f"<answer>{gold}</answer>"),)).value == 1.0
    wrong = task.score(sample, (Response(text="<answer>-1</answer>"),))
    assert wrong.value == 0.0 and gold in wrong.summary
    again = load_task("reasoning-gym:leg_counting?n_train=4&n_test=3&seed=5")
    assert [s.payload for s in again.split("test")] == [s.payload for s in task.split("test")]


def test_reasoning_gym_unknown_dataset() -> None:
    pytest.importorskip("reasoning_gym")
    with pytest.raises(ConfigError, match="cannot build 'no_such_dataset'"):
        load_task("reasoning-gym:no_such_dataset")


def _scripted_target(request):  # noqa: ANN001, ANN202 - a test double for the LLM protocol
    """Answers every task's prompt in its expected format (not necessarily correctly)."""
    import re

    from llm_cache.records import Response

    text = request.user_text()
    if "Select the single correct choice." in text:
        return Response(text="Reasoning.\nANSWER: A")
    if text.endswith("Next action:"):
        first = re.search(r"^\[([^\]]+)\]", text.split("Candidate elements:\n")[1], re.M)
        return Response(text=f"ACTION: CLICK [{first.group(1)}]")
    if "OUTPUT_PATH" in text:
        return Response(text="```python\nimport shutil\nshutil.copy(INPUT_PATH, OUTPUT_PATH)\n```")
    return Response(text="<answer>x</answer>" if "<answer>" in request.system else "The value is x.")


def _livemath_dir(root: Path, n: int) -> Path:
    choices = [{"label": x, "text": x} for x in "ABCDE"]
    for split in ("train", "test"):
        folder = root / "LiveMathematicianBench" / split
        folder.mkdir(parents=True)
        ids = [f"{split}:{k}" for k in range(n)]
        _write(folder / "tasks.jsonl", [{"id": i, "question": f"q {i}", "choices": choices} for i in ids])
        _write(folder / "labels.jsonl", [{"id": i, "correct_label": "AB"[k % 2]} for k, i in enumerate(ids)])
        (folder / "task_ids.json").write_text(json.dumps(ids))
    return root


def _mind2web_dir(root: Path, n: int) -> Path:
    def record(aid: str) -> dict:
        cands = [{"id": str(100 + k), "tag": "a", "text": f"t{k}", "extra": ""} for k in range(20)]
        step = {"i": 0, "op": "CLICK", "value": "", "gold_ids": ["100"], "candidates": cands,
                "forced_gold": False}
        return {"annotation_id": aid, "task": "t", "website": "w", "domain": "d",
                "action_reprs": ["[a] t0 -> CLICK"], "steps": [step]}

    (root / "Mind2Web/train").mkdir(parents=True)
    (root / "Mind2Web/test").mkdir(parents=True)
    _write(root / "Mind2Web/train/tasks.jsonl", [record(f"tr{k}") for k in range(n)])
    (root / "Mind2Web/test/tasks.json").write_text(json.dumps([record(f"te{k}") for k in range(n)]))
    return root


def _docvqa_task():  # noqa: ANN202
    import base64
    import io

    from PIL import Image

    from stratune_core.records.base import Sample
    from stratune_core.tasks.common import Splits
    from stratune_core.tasks.docvqa import DocVQAItem, DocVQATask

    buf = io.BytesIO()
    Image.new("RGB", (16, 16), "white").save(buf, format="PNG")
    image = base64.b64encode(buf.getvalue()).decode("ascii")
    samples = [Sample(id=str(k), stratum="ab"[k % 2],
                      payload=DocVQAItem(question=f"q{k}?", answers=("x", "y"), image_b64=image))
               for k in range(40)]
    return DocVQATask(splits=Splits(name="d", train=samples[:32], test=samples[32:]), initial_skill="s")


def _spreadsheet_dir(root: Path, n: int) -> Path:
    import openpyxl

    for split in ("train", "test"):
        folder = root / "SpreadsheetBench" / split
        tasks = []
        for k in range(n):
            tid = f"{split}{k}"
            (folder / "spreadsheet" / tid).mkdir(parents=True)
            for name, value in (("in.xlsx", k), ("gold.xlsx", k if k % 2 else k + 1)):
                wb = openpyxl.Workbook()
                wb.active["A1"] = value
                wb.save(folder / "spreadsheet" / tid / name)
            tasks.append({"id": tid, "dir": f"spreadsheet/{tid}", "instruction": "Keep A1.",
                          "instruction_type": "Cell-Level Manipulation", "answer_position": "A1",
                          "cases": [{"case": 1, "input": "in.xlsx", "answer": "gold.xlsx"}]})
        (folder / "tasks.json").write_text(json.dumps(tasks))
    return root


@pytest.mark.parametrize("kind", ["demo", "custom", "livemath", "mind2web", "docvqa", "spreadsheetbench"])
def test_task_runs_through_the_method(tmp_path: Path, kind: str) -> None:
    """Each task drives a short StraTune run with scripted models to its RunFinished event."""
    from stratune_core.config.knobs import Config
    from stratune_core.round.run import run
    from stratune_core.state.events import RunFinished
    from tests.support.toy import InProcessLLM, ToyOptimizer

    if kind == "demo":
        task = load_task("demo")
    elif kind == "custom":
        rows = [{"id": k, "input": f"q{k}", "expected": "x", "split": "train" if k < 32 else "test",
                 "stratum": "ab"[k % 2]} for k in range(40)]
        task = load_task(str(_write(tmp_path / "c.jsonl", rows)), scorer="anls")
    elif kind == "livemath":
        task = load_task("livemath", data_dir=_livemath_dir(tmp_path, 32))
    elif kind == "mind2web":
        task = load_task("mind2web", data_dir=_mind2web_dir(tmp_path, 32))
    elif kind == "docvqa":
        task = _docvqa_task()
    else:
        task = load_task("spreadsheetbench", data_dir=_spreadsheet_dir(tmp_path, 16))
    result = run(Config(seed=1, max_rounds=2), task, InProcessLLM(target=_scripted_target, optimizer=ToyOptimizer()))
    assert isinstance(result.events[-1], RunFinished)
    assert 0 < result.spent <= result.budget
