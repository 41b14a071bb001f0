"""What an unreachable MLflow server costs a run: the words example trained against the bundled
fake Messages API three times, without tracking, with `--mlflow` at a port where nothing listens
(a dead server), and at a socket that accepts and never answers (a hung one).

Run: .venv/bin/python -m benchmarks.mlflow_stall
"""

from __future__ import annotations

import socket
import tempfile
import time
from pathlib import Path

from benchmarks.common import ToyResponder
from llm_cache.fake_server import FakeAnthropicServer
from replay.app import main as stratune

WORDS = Path(__file__).resolve().parents[1] / "examples" / "grid" / "words"


def _train(out: Path, *extra: str) -> float:
    started = time.monotonic()
    code = stratune(["train", "--task", str(WORDS), "--scorer", "regex", "--target",
                     "anthropic:claude-haiku-4-5", "--optimizer", "anthropic:claude-sonnet-4-6",
                     "--out", str(out), *extra])
    assert code == 0, code
    return time.monotonic() - started


def main() -> None:
    import os

    with tempfile.TemporaryDirectory() as tmp, FakeAnthropicServer(
            responder=ToyResponder()) as fake:
        os.environ["ANTHROPIC_BASE_URL"] = fake.url
        os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-benchmark-not-a-key")
        root = Path(tmp)
        with socket.socket() as free:
            free.bind(("127.0.0.1", 0))
            dead = free.getsockname()[1]
        hung = socket.socket()
        hung.bind(("127.0.0.1", 0))
        hung.listen(64)  # accepts connections, never reads or answers
        rows = {
            "no tracking": _train(root / "plain"),
            "dead server": _train(root / "dead", "--mlflow", f"http://127.0.0.1:{dead}"),
            "hung server": _train(root / "hung", "--mlflow",
                                  f"http://127.0.0.1:{hung.getsockname()[1]}"),
        }
        hung.close()
    for name, seconds in rows.items():
        print(f"{name:12} {seconds:6.1f} s  ({seconds - rows['no tracking']:+.1f} s)")


if __name__ == "__main__":
    main()
