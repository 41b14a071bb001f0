"""A real `mlflow server` (SQLite store) on 127.0.0.1 in a subprocess, to kill and start again.

`mlflow server` needs more than mlflow-skinny: Flask, flask-cors, aiohttp and pandas (the dev
extra has them). Its job runner (huey) is switched off: tracking does not use it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

READY_WAIT_S = 120.0  # a cold start imports a lot of MLflow on a busy 2-core machine


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class MlflowServer:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> MlflowServer:
        mlflow = Path(sys.executable).with_name("mlflow")
        command = [str(mlflow), "server", "--backend-store-uri",
                   f"sqlite:///{self.directory / 'mlflow.db'}", "--artifacts-destination",
                   str(self.directory / "artifacts"), "--host", "127.0.0.1", "--port",
                   str(self.port), "--workers", "1"]
        env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
        log = (self.directory / "server.log").open("ab")
        # Its own process group: the server's worker processes die with it.
        self.process = subprocess.Popen(command, stdout=log, stderr=log, env=env,
                                        start_new_session=True)
        deadline = time.monotonic() + READY_WAIT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"mlflow server exited; see {self.directory / 'server.log'}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as reply:
                    if reply.status == 200:
                        return self
            except OSError:
                time.sleep(0.5)
        self.kill()
        raise RuntimeError(f"mlflow server not ready in {READY_WAIT_S:.0f} s")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.process = None
