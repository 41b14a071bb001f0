"""Runs grid.toml through the real CLI with scripted models instead of Claude, then prints its
tables: the toy target and optimizer of the test suite answer the grid's model names behind the
bundled fake Messages API server (llm_cache/testing/fake_server.py), reached by the real `anthropic` SDK.
The figures describe the toy world, not Claude. Run from the repository root:

    python -m examples.grid.run_scripted [OUT_DIR] [--format markdown]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from benchmarks.common import ToyResponder
from llm_cache.testing.fake_server import FakeAnthropicServer
from replay.cli import main as stratune

HERE = Path(__file__).resolve().parent


TABLES = ("main", "ablations", "tokens", "budget")


def run(out: str, fmt: str = "markdown", tables: tuple[str, ...] = TABLES) -> int:
    saved = {name: os.environ.get(name) for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")}
    try:
        with FakeAnthropicServer(responder=ToyResponder()) as fake:
            os.environ["ANTHROPIC_BASE_URL"] = fake.url
            os.environ["ANTHROPIC_API_KEY"] = "sk-ant-example-not-a-real-key"
            code = stratune(["grid", str(HERE / "grid.toml"), "--out", out])
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    if code != 0:
        return code
    return stratune(["compare", out, "--format", fmt,
                     *(arg for table in tables for arg in ("--table", table))])


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    fmt = sys.argv[sys.argv.index("--format") + 1] if "--format" in sys.argv else "markdown"
    raise SystemExit(run(args[0] if args else "runs/example-grid", fmt))
