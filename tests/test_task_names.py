"""A built-in task's name is the built-in task, even where the working directory (or a grid
file's folder) holds a folder of that name: `--task demo` is the bundled task and says which was
taken; the folder is `--task ./demo`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.commands.app import main as stratune
from replay.grid.grid_file import load_grid
from replay.tasks import bundled
from tests.grid_support import write_grid

MODELS = ("--target", "anthropic:claude-haiku-4-5", "--optimizer", "anthropic:claude-sonnet-4-6")


@pytest.fixture
def demo_folder(tmp_path, monkeypatch) -> Path:
    """A working directory holding `demo/`, a custom task of 3 training samples."""
    folder = tmp_path / "demo"
    folder.mkdir()
    for split, n in (("train", 3), ("test", 2)):
        rows = [{"id": f"{split}{i}", "input": f"q{i}", "expected": f"a{i}"} for i in range(n)]
        (folder / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows),
                                               encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return folder


def _training_samples(out: str) -> int:
    line = next(line for line in out.splitlines() if "training samples" in line)
    return int(line.split("│")[2].strip())


def test_the_name_is_the_bundled_task_and_says_so(demo_folder, capsys):
    assert stratune(["plan", "--task", "demo", *MODELS]) == 0
    captured = capsys.readouterr()
    assert _training_samples(captured.out) == len(bundled.load().split("train"))
    note, = captured.err.strip().splitlines()
    assert "bundled task" in note and "--task ./demo" in note


def test_the_folder_is_a_path(demo_folder, capsys):
    assert stratune(["plan", "--task", "./demo", *MODELS]) == 0
    captured = capsys.readouterr()
    assert _training_samples(captured.out) == 3 and captured.err == ""


def test_without_such_a_folder_nothing_is_said(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert stratune(["plan", "--task", "demo", *MODELS]) == 0
    assert capsys.readouterr().err == ""


def test_a_grid_task_named_demo_beside_a_demo_folder(demo_folder):
    grid = write_grid(demo_folder.parent / "grid.toml", ablations="full = {}\n")
    text = grid.read_text(encoding="utf-8").replace('task = "toy"', 'task = "demo"')
    grid.write_text(text, encoding="utf-8")
    assert [t.spec.spec for t in load_grid(grid).tasks] == ["demo"]
    grid.write_text(text.replace('task = "demo"', 'task = "./demo"'), encoding="utf-8")
    assert [t.spec.spec for t in load_grid(grid).tasks] == [str(demo_folder.resolve())]
