"""The API key never lands on disk: a CLI run against the fake Anthropic server with a
recognisable key in the environment leaves no trace of it in the run directory or its cache."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from benchmarks.common import ToyResponder
from llm_cache.fake_server import FakeAnthropicServer

SECRET = "sk-ant-FAKE-SECRET-1234567890"
ROOT = Path(__file__).resolve().parents[1]


def _hits(directory: Path, needles: tuple[bytes, ...]) -> list[str]:
    found = []
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        data = path.read_bytes()
        found += [f"{path.relative_to(directory)}: {n!r}" for n in needles if n in data]
    return found


def test_api_key_appears_in_no_file_of_the_run(tmp_path):
    out = tmp_path / "run"
    with FakeAnthropicServer(responder=ToyResponder()) as fake:
        env = {**os.environ, "ANTHROPIC_API_KEY": SECRET,
               "ANTHROPIC_BASE_URL": fake.url}
        done = subprocess.run(
            [sys.executable, "-m", "tests.support.cli", "train", "--task", "toy", "--limit", "24",
             "--target", "anthropic:claude-haiku-4-5", "--optimizer", "anthropic:claude-sonnet-4-6",
             "--out", str(out)],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
        )
        log = fake.requests
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    # The key was really in use: every call carried it.
    assert log and all(SECRET in " ".join(r.headers.values()) for r in log)
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.parent.name == "cache" or "cache" in p.parts for p in files)
    needles = (SECRET.encode(), SECRET.encode("utf-16-le"), b"FAKE-SECRET-1234567890")
    assert _hits(out, needles) == []
    assert SECRET not in done.stdout and SECRET not in done.stderr
