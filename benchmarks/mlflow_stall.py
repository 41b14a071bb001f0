"""What an unreachable MLflow server costs a run: the words example trained against the bundled
fake Messages API three times, without tracking, with `--mlflow` at a port where nothing listens
(a dead server), and at a socket that accepts and never answers (a hung one).

Run: .venv/bin/python -m benchmarks.mlflow_stall [--quick]  (quick: 8 samples, 2 rounds, MLflow's
HTTP timeout 1 s instead of StraTune's 5 s)
"""

from __future__ import annotations

import argparse
import os
import socket
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from benchmarks.common import ToyResponder
from llm_cache.testing.fake_server import FakeAnthropicServer
from replay.commands.app import main as stratune

WORDS = Path(__file__).resolve().parents[1] / "examples" / "grid" / "words"
QUICK_ARGS = ("--limit", "8", "--max-rounds", "2")
# The hung server costs the run its HTTP timeouts; a quick run shortens them (a user's setting
# wins over StraTune's bound, replay/tracking/queue.py).
QUICK_ENV = {"MLFLOW_HTTP_REQUEST_TIMEOUT": "1"}


@contextmanager
def environ(changes: Mapping[str, str]) -> Iterator[None]:
    """`changes` set for the block, the previous values back after it (the benchmark may run
    inside another process: a test)."""
    before = {name: os.environ.get(name) for name in changes}
    os.environ.update(changes)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _train(out: Path, *extra: str) -> float:
    started = time.monotonic()
    code = stratune(["train", "--task", str(WORDS), "--scorer", "regex", "--target",
                     "anthropic:claude-haiku-4-5", "--optimizer", "anthropic:claude-sonnet-4-6",
                     "--out", str(out), *extra])
    assert code == 0, code
    return time.monotonic() - started


def measure(extra: Sequence[str] = (), env: Mapping[str, str] | None = None) -> dict[str, float]:
    """Seconds per run: no tracking, dead server, hung server."""
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropicServer(
            responder=ToyResponder()) as fake, environ({
                "ANTHROPIC_BASE_URL": fake.url,
                "ANTHROPIC_API_KEY": os.environ.get("ANTHROPIC_API_KEY",
                                                    "sk-ant-benchmark-not-a-key"),
                **(env or {})}):
        root = Path(tmp)
        with socket.socket() as free:
            free.bind(("127.0.0.1", 0))
            dead = free.getsockname()[1]
        with socket.socket() as hung:
            hung.bind(("127.0.0.1", 0))
            hung.listen(64)  # accepts connections, never reads or answers
            return {
                "no tracking": _train(root / "plain", *extra),
                "dead server": _train(root / "dead", *extra, "--mlflow",
                                      f"http://127.0.0.1:{dead}"),
                "hung server": _train(root / "hung", *extra, "--mlflow",
                                      f"http://127.0.0.1:{hung.getsockname()[1]}"),
            }


def main(argv: Sequence[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 samples, 2 rounds, 1 s timeouts")
    args = parser.parse_args(argv)
    rows = measure(QUICK_ARGS, QUICK_ENV) if args.quick else measure()
    for name, seconds in rows.items():
        print(f"{name:12} {seconds:6.1f} s  ({seconds - rows['no tracking']:+.1f} s)")
    return rows


if __name__ == "__main__":
    main()
