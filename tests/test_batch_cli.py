"""`stratune train --target 'anthropic:...?batch=on'` end to end: the real CLI in a subprocess,
the real SDK, the fake server (in this process, so its batches outlive a killed run).

- the same run with and without `batch=on` writes identical events, and usage.json and the
  viewer show the Batch API part of the cost;
- a run SIGKILLed while its batch is processing, then run again with the same command, collects
  that batch (nothing is submitted twice) and ends exactly like the uninterrupted run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from llm_cache.testing.fake_server import FakeAnthropicServer
from tests.support.toy import INITIAL_SKILL, expected_answer, make_samples, toy_responder

ROOT = Path(__file__).resolve().parents[1]


def write_task(directory: Path) -> Path:
    """The toy task as a custom JSONL task, so the CLI needs no test hooks."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = []
    for split, samples in (("train", make_samples(24)), ("test", make_samples(8, offset=1000))):
        for s in samples:
            word, marker = s.payload["word"], s.payload["marker"]
            lines.append(json.dumps({"id": s.id, "input": f"Word: {word} [{marker}]",
                                     "expected": expected_answer(word, marker),
                                     "stratum": marker, "split": split}))
    (directory / "initial_skill.txt").write_text(INITIAL_SKILL, encoding="utf-8")
    path = directory / "task.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class Responder:
    """Haiku answers as the toy target, Sonnet as the toy optimizer."""

    def __init__(self) -> None:
        self.toy = toy_responder()

    def __call__(self, body: Mapping[str, Any]) -> str:
        toy_model = "toy-target" if body["model"].startswith("claude-haiku") else "toy-optimizer"
        return self.toy({**body, "model": toy_model})


def command(task: Path, url: str, out: Path, *, batch: bool) -> list[str]:
    target = f"anthropic:claude-haiku-4-5?base_url={url}"
    if batch:
        target += "&batch=on&batch_poll=0.05"
    return [sys.executable, "-m", "replay.cli", "train", "--task", str(task), "--scorer",
            "exact", "--target", target, "--optimizer",
            f"anthropic:claude-sonnet-4-6?base_url={url}", "--seed", "2", "--out", str(out)]


def env() -> dict[str, str]:
    values = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-test-not-a-key"}
    values.pop("STRATUNE_TEST_HOOKS", None)
    return values


def train(task: Path, url: str, out: Path, *, batch: bool) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command(task, url, out, batch=batch), cwd=ROOT, env=env(),
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done


def events(out: Path) -> list[str]:
    return (out / "events.jsonl").read_text(encoding="utf-8").splitlines()


def target_row(out: Path) -> dict[str, Any]:
    usage = json.loads((out / "usage.json").read_text(encoding="utf-8"))
    (row,) = [r for r in usage["rows"] if r["kind"] == "target_execution"]
    return row


def batched_items(fake: FakeAnthropicServer) -> list[str]:
    return [r["custom_id"] for b in fake.batches.batches.values() for r in b.requests]


@pytest.mark.slow
def test_batch_on_gives_the_same_events_and_accounts_the_batch_apart(tmp_path):
    task = write_task(tmp_path / "task")
    with FakeAnthropicServer(responder=Responder()) as fake:
        train(task, fake.url, tmp_path / "live", batch=False)
    with FakeAnthropicServer(responder=Responder(), batch_delay=0.1) as fake:
        done = train(task, fake.url, tmp_path / "batch", batch=True)
        assert fake.batches.batches and len(set(batched_items(fake))) == len(batched_items(fake))
    assert events(tmp_path / "batch") == events(tmp_path / "live")
    live, batch = target_row(tmp_path / "live"), target_row(tmp_path / "batch")
    assert live["batch_calls"] == 0 and batch["batch_calls"] >= 8
    assert batch["live_calls"] + batch["batch_calls"] == batch["paid_calls"] == live["paid_calls"]
    assert batch["cost_usd"] == pytest.approx(batch["live_cost_usd"] + batch["batch_cost_usd"])
    assert batch["cost_usd"] < live["cost_usd"]
    assert "submitted (Batch API, 50% price)" in done.stdout  # the shell prints progress
    view = subprocess.run([sys.executable, "-m", "replay.cli", "view", str(tmp_path / "batch")],
                          cwd=ROOT, env=env(), capture_output=True, text=True, timeout=60)
    assert "Batch API" in view.stdout
    replayed = subprocess.run([sys.executable, "-m", "replay.cli", "replay",
                               str(tmp_path / "batch")], cwd=ROOT, env=env(),
                              capture_output=True, text=True, timeout=60)
    assert replayed.returncode == 0 and "replay OK" in replayed.stdout


@pytest.mark.slow
def test_a_run_killed_while_its_batch_processes_collects_it_on_the_rerun(tmp_path):
    task = write_task(tmp_path / "task")
    with FakeAnthropicServer(responder=Responder(), batch_delay=0.1) as fake:
        train(task, fake.url, tmp_path / "reference", batch=True)
        reference_items = len(batched_items(fake))
    out = tmp_path / "killed"
    journal = out / "batches.jsonl"
    with FakeAnthropicServer(responder=Responder(), batch_delay=3.0) as fake:
        run = subprocess.Popen(command(task, fake.url, out, batch=True), cwd=ROOT, env=env(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 120
            while not (journal.exists() and '"submitted"' in journal.read_text()):
                assert run.poll() is None, "the run ended before it submitted a batch"
                assert time.monotonic() < deadline, "no batch was journaled"
                time.sleep(0.02)
            run.send_signal(signal.SIGKILL)
        finally:
            run.wait(timeout=30)
        assert run.returncode == -signal.SIGKILL
        (first,) = fake.batches.batches.values()
        assert first.lines is None  # still processing when the run died
        assert not (out / "final_skill.txt").exists()
        train(task, fake.url, out, batch=True)
        items = batched_items(fake)
    assert len(items) == len(set(items)) == reference_items  # nothing was paid for twice
    lines = [json.loads(x) for x in journal.read_text().splitlines()]
    assert {"event": "collected", "batch_id": first.id} in lines
    assert events(out) == events(tmp_path / "reference")
    assert (out / "final_skill.txt").read_text() == (tmp_path / "reference" /
                                                      "final_skill.txt").read_text()
