"""The API key never lands on disk: a CLI run against the fake Anthropic server with a
recognisable key in the environment leaves no trace of it in the run directory or its cache."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from benchmarks.common import ToyResponder
from llm_cache.testing.fake_server import FakeAnthropicServer

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


def test_a_key_given_in_the_model_spec_is_never_stored_or_printed(tmp_path):
    """The documented `?api_key=` option: used for every call, absent from every file of the
    run and from what train, view, replay and an error print."""
    from tests.support.cli import stratune

    spec_key = "sk-ant-SPEC-KEY-0987654321"
    out = tmp_path / "run"
    with FakeAnthropicServer(responder=ToyResponder()) as fake:
        specs = [f"anthropic:{model}?api_key={spec_key}&base_url={fake.url}&timeout=30"
                 for model in ("claude-haiku-4-5", "claude-sonnet-4-6")]
        done = stratune("train", "--task", "toy", "--limit", "24", "--target", specs[0],
                        "--optimizer", specs[1], "--out", str(out), "--test-eval",
                        ANTHROPIC_API_KEY="")
        log = fake.requests
        bad = stratune("plan", "--task", "toy", "--target", specs[0].replace("anthropic:", "x:"),
                       "--optimizer", specs[1])
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert log and all(spec_key in " ".join(r.headers.values()) for r in log)
    view = stratune("view", str(out))
    replayed = stratune("replay", str(out))
    assert view.returncode == 0 and replayed.returncode == 0, replayed.stdout
    manifest = (out / "manifest.json").read_text()
    assert "base_url=" in manifest and "timeout=30" in manifest  # the rest of the spec stays
    needles = (spec_key.encode(), spec_key.encode("utf-16-le"), b"SPEC-KEY-0987654321")
    assert _hits(out, needles) == []
    assert bad.returncode == 2 and "api_key=***" in bad.stderr
    for said in (done, view, replayed, bad):
        assert "SPEC-KEY" not in said.stdout + said.stderr


def test_the_grid_keeps_its_file_with_spec_keys_masked(tmp_path):
    """`stratune grid` keeps a copy of its grid file in the grid directory, masked as the
    manifest is: a pair's `?api_key=` never lands there."""
    import io

    from rich.console import Console

    from replay.grid.grid_file import load_grid
    from replay.grid.run import run_grid
    from tests.grid_support import OPTIMIZER, TARGET, ScriptedEnv, write_grid

    spec_key = "sk-ant-GRID-KEY-1122334455"
    grid = write_grid(tmp_path / "grid.toml", ablations="full = {}\n", seeds="[0]",
                      extra="[defaults]\noptimizer_max_tokens=4096\n",
                      target=f"{TARGET}?api_key={spec_key}&timeout=30",
                      optimizer=f"{OPTIMIZER}?api_key={spec_key}")
    root = tmp_path / "out"
    result = run_grid(load_grid(grid), root, Console(file=io.StringIO()), env=ScriptedEnv())
    assert result.code == 0
    kept = (root / "grid.toml").read_text()
    assert f'"{TARGET}?timeout=30"' in kept and f'"{OPTIMIZER}"' in kept  # as in manifests
    assert "optimizer_max_tokens=4096" in kept  # a field named like a secret is not one
    needles = (spec_key.encode(), b"GRID-KEY-1122334455")
    assert _hits(root, needles) == []
