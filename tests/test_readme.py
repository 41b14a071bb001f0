"""The docs' examples run as written: the custom task of "Your own task" (docs/tasks.md) and its
module:function scorer."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from llm_cache.records import Response
from tests.support.docs import ROOT, block_after, page

TASKS = page("tasks.md")


def _block(language: str, after: str) -> str:
    return block_after(TASKS, after, language)


def _stratune() -> list[str]:
    script = Path(sys.executable).with_name("stratune")
    return [str(script)] if script.exists() else [sys.executable, "-m", "replay.cli"]


def test_custom_task_example_plans_from_the_users_folder(tmp_path):
    (tmp_path / "orders.jsonl").write_text(_block("jsonl", "## Your own task"))
    (tmp_path / "my_scorer.py").write_text(_block("python", "## Your own task"))
    commands = _block("bash", "## Your own task").strip().splitlines()
    plan = next(line for line in commands if line.startswith("stratune plan"))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    done = subprocess.run([*_stratune(), *plan.split()[1:]], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert re.search(r"training samples\W+3\b", done.stdout), done.stdout
    # the page says so: three lines are too few for a run, and plan warns about it
    assert "the training set is small" in " ".join(done.stdout.split())


def test_custom_task_example_scores_with_the_users_function(tmp_path, monkeypatch):
    from replay.tasks.registry import load_task

    (tmp_path / "orders.jsonl").write_text(_block("jsonl", "## Your own task"))
    (tmp_path / "my_scorer.py").write_text(_block("python", "## Your own task"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.delitem(sys.modules, "my_scorer", raising=False)
    task = load_task("orders.jsonl", scorer="my_scorer:score")
    assert [s.id for s in task.split("train")] == ["t1", "t2", "t3"]
    sample = task.split("test")[0]
    assert task.score(sample, (Response(text="56"),)).value == 1.0
    assert task.score(sample, (Response(text="56 crates"),)).value == 0.0
