"""Custom JSONL tasks: the built-in scorers, user scorers and both file layouts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from llm_cache.records import ImageBlock, Response
from replay.tasks import custom
from stratune_core.records.errors import ConfigError, TaskDataError
from stratune_core.tasks import custom_scorers as cs


@pytest.mark.parametrize(
    ("scorer", "text", "expected", "value"),
    [
        ("exact", "  Paris ", "paris", 1.0),
        ("exact", "It is Paris.", "Paris", 0.0),
        ("exact", "<answer>Lyon</answer>", ["Paris", "Lyon"], 1.0),
        ("regex", "<answer>2024-03-07</answer>", r"\d{4}-\d{2}-\d{2}", 1.0),
        ("regex", "on 2024-03-07", r"\d{4}-\d{2}-\d{2}", 0.0),
        ("choice", "ANSWER: C", "C", 1.0),
        ("choice", "A fine question. ANSWER: B", "C", 0.0),
        ("numeric", "The total is $1,234.50", 1234.5, 1.0),
        ("numeric", "<answer>12%</answer>", "12", 1.0),
        ("numeric", "about 1240", "1234.5", 0.0),
        ("numeric:0.01", "about 1240", "1234.5", 1.0),
        ("numeric", "no digits", 3, 0.0),
        ("anls", "<answer>1,234.5</answer>", "1,234.50", pytest.approx(7 / 8)),
    ],
)
def test_builtin_scorers(scorer: str, text: str, expected: object, value: float) -> None:
    assert cs.builtin_scorer(scorer).fn(text, expected) == value


def test_unknown_scorer_and_bad_tolerance() -> None:
    with pytest.raises(ConfigError, match="unknown scorer 'fuzzy'"):
        cs.builtin_scorer("fuzzy")
    with pytest.raises(ConfigError, match="bad tolerance"):
        cs.builtin_scorer("numeric:abc")


def _lines(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def test_single_file_with_split_field(tmp_path: Path) -> None:
    """One file: the split field routes lines; strata default to one; skill file is read."""
    path = tmp_path / "qa.jsonl"
    path.write_text(_lines([
        {"id": 1, "input": "2+2?", "expected": "4", "split": "train", "stratum": "add"},
        {"id": 2, "input": "3+3?", "expected": "6", "split": "train"},
        {"id": 3, "input": "5+5?", "expected": "10", "split": "test"},
    ]))
    (tmp_path / "initial_skill.txt").write_text("Reply with the number only.\n")
    task = custom.load(path, scorer="numeric", placement="user_suffix")
    assert [s.id for s in task.split("train")] == ["1", "2"]
    assert [s.stratum for s in task.split("train")] == ["add", "all"]
    assert task.info.initial_skill == "Reply with the number only." and task.info.name == "qa"
    (req,) = task.requests("SKILL", task.split("test")[0], "m")
    assert req.system == "" and req.user_text() == "5+5?\n\nSKILL"
    assert task.score(task.split("test")[0], (Response(text="10"),)).value == 1.0
    wrong = task.score(task.split("test")[0], (Response(text="It is 11"),))
    assert wrong.value == 0.0 and 'expected "10"' in wrong.summary


def test_directory_layout_and_image(tmp_path: Path) -> None:
    """train.jsonl/test.jsonl in a folder; an image path becomes an image block."""
    from PIL import Image

    Image.new("RGB", (8, 8)).save(tmp_path / "p.png")
    (tmp_path / "train.jsonl").write_text(_lines([{"id": "a", "input": "x", "expected": "y", "image": "p.png"}]))
    (tmp_path / "test.jsonl").write_text(_lines([{"id": "b", "input": "x", "expected": "y", "split": "test"}]))
    task = custom.load(tmp_path, scorer="anls")
    (req,) = task.requests("S", task.split("train")[0], "m")
    assert isinstance(req.messages[0].content[1], ImageBlock)
    assert task.info.success_threshold == 0.9 and not task.info.binary
    assert task.info.initial_skill == custom.DEFAULT_SKILL


def test_module_function_scorer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A user scorer given as module:function is imported and used, its threshold honoured."""
    (tmp_path / "my_scorer.py").write_text(
        "def length(text, expected):\n    return min(1.0, len(text) / int(expected))\n"
        "length.threshold = 0.5\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_scorer", raising=False)
    path = tmp_path / "t.jsonl"
    path.write_text(_lines([{"id": 1, "input": "i", "expected": 10, "split": "train"},
                            {"id": 2, "input": "i", "expected": 4, "split": "test"}]))
    task = custom.load(path, scorer="my_scorer:length")
    assert task.info.success_threshold == 0.5
    assert task.score(task.split("train")[0], (Response(text="abcde"),)).value == 0.5


def test_scorer_out_of_range_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A user scorer returning 7 is reported, not clipped."""
    (tmp_path / "bad_scorer.py").write_text("def f(text, expected):\n    return 7\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "t.jsonl"
    path.write_text(_lines([{"id": 1, "input": "i", "expected": 1, "split": "train"},
                            {"id": 2, "input": "i", "expected": 1, "split": "test"}]))
    with pytest.raises(TaskDataError, match="bad_scorer:f: returned 7 for sample 1"):
        custom.load(path, scorer="bad_scorer:f")  # refused before anything is spent
    sys.modules.pop("bad_scorer", None)


@pytest.mark.parametrize("body", ["return None", "raise KeyError('gold')",
                                  "return float('nan')", "return 'yes'"])
def test_a_scorer_failing_on_some_answer_names_the_sample(tmp_path, monkeypatch, body) -> None:
    """It passes the load-time try, then fails on one reply: one error naming the sample."""
    (tmp_path / "picky_scorer.py").write_text(
        "def f(text, expected):\n    if 'boom' in text:\n        " + body
        + "\n    return float(text.strip() == str(expected))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "t.jsonl"
    path.write_text(_lines([{"id": "q1", "input": "i", "expected": 1, "split": "train"},
                            {"id": "q2", "input": "i", "expected": 1, "split": "test"}]))
    task = custom.load(path, scorer="picky_scorer:f")
    with pytest.raises(TaskDataError) as caught:
        task.score(task.split("test")[0], (Response(text="boom"),))
    message = str(caught.value)
    assert "picky_scorer:f" in message and "sample q2" in message and "\n" not in message
    sys.modules.pop("picky_scorer", None)


def test_missing_module_scorer() -> None:
    with pytest.raises(ConfigError, match="cannot load 'no_such_mod_xyz:f'"):
        custom.resolve_scorer("no_such_mod_xyz:f")


def test_failure_summary_names_a_right_value_wrapped_in_words(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    path.write_text(_lines([
        {"id": 1, "input": "Total?", "expected": "65.31", "split": "train"},
        {"id": 2, "input": "Total?", "expected": "65.31", "split": "test"},
    ]))
    task = custom.load(path, scorer="anls")
    sample = task.split("test")[0]
    wrapped = task.score(sample, (Response(text="The total amount paid is 65.31."),))
    assert wrapped.value == 0.0 and "contains the expected answer" in wrapped.summary
    other = task.score(sample, (Response(text="The total is 70.00."),))
    assert other.value == 0.0 and "contains the expected answer" not in other.summary
