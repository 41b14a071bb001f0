"""`grid --ray ADDRESS` where no cluster can be joined ends with one line of ours, exit 2, and
none of Ray's own: against a closed port, an address found through RAY_ADDRESS, and a real
local cluster that requires Ray's authentication token the shell lacks."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
RAY = Path(sys.executable).with_name("ray")
GRID = f"""seeds = [0]
budget = "2x"

[tasks.words]
task = "{ROOT / 'examples' / 'grid' / 'words'}"
scorer = "regex"

[pairs.toy]
target = "anthropic:claude-haiku-4-5"
optimizer = "anthropic:claude-sonnet-4-6"

[ablations]
full = {{}}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _grid(tmp_path: Path, address: str, **env: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "g.toml").write_text(GRID, encoding="utf-8")
    environ = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-test-0", **env}
    return subprocess.run([sys.executable, "-m", "replay.cli", "grid", str(tmp_path / "g.toml"),
                           "--out", str(tmp_path / "out"), "--ray", address],
                          capture_output=True, text=True, env=environ, cwd=ROOT, timeout=120)


def _one_line(done: subprocess.CompletedProcess[str], out: Path, *says: str) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --ray "), done.stderr
    for word in says:
        assert word in lines[0]
    assert not list(out.rglob("manifest.json"))  # no cell started


def test_an_address_where_nothing_listens_is_one_line(tmp_path):
    port = _free_port()
    _one_line(_grid(tmp_path, f"127.0.0.1:{port}"), tmp_path, f"127.0.0.1:{port}", "nothing listens",
              "ray start --head")


def test_auto_reads_ray_address_and_probes_it(tmp_path):
    port = _free_port()
    _one_line(_grid(tmp_path, "auto", RAY_ADDRESS=f"127.0.0.1:{port}"), tmp_path, "--ray auto",
              f"127.0.0.1:{port}")


def test_not_an_address_is_one_line(tmp_path):
    _one_line(_grid(tmp_path, "headnode"), tmp_path, "not HOST:PORT")


def test_a_cluster_that_wants_a_token_the_shell_lacks_is_one_line(tmp_path):
    port = _free_port()
    head_home, shell_home = tmp_path / "head", tmp_path / "shell"
    head_home.mkdir()
    shell_home.mkdir()
    env = {**os.environ, "HOME": str(head_home), "RAY_AUTH_MODE": "token"}
    for name in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS"):
        env.pop(name, None)
    subprocess.run([str(RAY), "get-auth-token", "--generate"], env=env, capture_output=True,
                   timeout=60, check=True)
    # --block keeps the cluster's processes under this one, which the test ends itself
    head = subprocess.Popen([str(RAY), "start", "--head", "--block", f"--port={port}",
                             "--num-cpus=1", "--include-dashboard=false",
                             "--disable-usage-stats"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and head.poll() is None, "ray start failed"
                time.sleep(0.5)
        done = _grid(tmp_path, f"127.0.0.1:{port}", HOME=str(shell_home), RAY_AUTH_MODE="token")
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:  # a loaded machine: Ray's shutdown is slow
            os.killpg(head.pid, signal.SIGKILL)
            head.wait(timeout=60)
    _one_line(done, tmp_path, "authentication token", "RAY_AUTH_TOKEN")
