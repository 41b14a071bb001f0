"""Escape attempts against the SpreadsheetBench sandbox fail safely."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from replay.tasks.sandbox import Limits, isolation, run_python

FAST = Limits(cpu_seconds=10, memory_bytes=1024**3, file_bytes=1024**2, processes=64,
              wall_seconds=20)


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A local TCP server; whatever reaches it lands in the list."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    received: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                received.append(conn.recv(100) or b"<connected>")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], received
    stop.set()
    thread.join()
    server.close()


def test_runs_code_and_returns_output() -> None:
    """A well-behaved program exits 0 and its output file comes back."""
    result = run_python("open(OUTPUT_PATH, 'w').write(open(INPUT_PATH).read().upper())",
                        inputs={"in.txt": b"abc"}, input_name="in.txt", output_name="out.txt",
                        limits=FAST)
    assert result.ok and result.output("out.txt") == b"ABC"


def test_socket_connect_is_refused(listener: tuple[int, list[bytes]]) -> None:
    """Connecting to a listening local socket fails inside the sandbox; the listener hears nothing."""
    port, received = listener
    code = f"import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=2)\ns.send(b'hi')"
    result = run_python(code, limits=FAST)
    assert result.exit_code == 2 and "OSError" in result.stderr
    assert received == []


def test_socket_patch_bypass_through_a_fresh_interpreter(listener: tuple[int, list[bytes]]) -> None:
    """A child interpreter without the patch still cannot connect: the network namespace holds."""
    if not isolation().network_namespace:
        pytest.skip("no network namespace on this machine: only the in-process socket patch applies")
    port, received = listener
    inner = (
        "import socket\ntry:\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=2).send(b'escaped')\n"
        "    print('CONNECTED')\nexcept OSError as exc:\n    print('CONNECT_FAILED', exc.errno)\n"
    )
    # The child must be an interpreter the sandbox user may execute, so that a failure below
    # is the network's doing and not a refused exec.
    code = (
        "import os, subprocess, sys\n"
        "exe = next(p for p in (sys.executable, '/usr/bin/python3', '/usr/local/bin/python3')\n"
        "           if os.access(p, os.X_OK))\n"
        f"print(subprocess.run([exe, '-c', {inner!r}], capture_output=True, text=True).stdout)\n"
    )
    result = run_python(code, limits=FAST)
    assert result.ok, result.stderr
    assert "CONNECT_FAILED" in result.stdout and "CONNECTED\n" not in result.stdout
    assert received == []


def test_environment_has_no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Secrets in the parent's environment do not reach the program."""
    for name in ("ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "MY_KEY"):
        monkeypatch.setenv(name, "secret-value")
    result = run_python("import os\nfor k, v in os.environ.items(): print(k, v)", limits=FAST)
    assert result.ok
    names = [line.split(" ", 1)[0] for line in result.stdout.splitlines()]
    assert names and "HOME" in names
    assert not [n for n in names if n.endswith(("_KEY", "_TOKEN")) or n.startswith(("AWS_", "ANTHROPIC_"))]
    assert "secret-value" not in result.stdout


def test_home_aws_is_not_the_real_one(tmp_path: Path) -> None:
    """~/.aws resolves inside the fresh sandbox directory, which holds no credentials."""
    code = ("import os\npath = os.path.expanduser('~/.aws/credentials')\n"
            "print(path)\nprint(open(path).read())")
    result = run_python(code, limits=FAST)
    assert result.exit_code == 2 and "FileNotFoundError" in result.stderr
    assert os.path.expanduser("~") not in result.stdout.splitlines()[0]


def test_root_only_file_is_unreadable(tmp_path: Path) -> None:
    """A file only root can read (like /root/.aws/credentials) stays closed to the program."""
    if not isolation().drop_to_nobody:
        pytest.skip("sandbox does not change user here (not started as root)")
    secret = tmp_path / "credentials"
    secret.write_text("aws_secret_access_key = XYZ")
    secret.chmod(0o600)
    os.chmod(tmp_path, 0o755)
    result = run_python(f"print(open({str(secret)!r}).read())", limits=FAST)
    assert result.exit_code == 2 and "PermissionError" in result.stderr
    assert "XYZ" not in result.stdout


def test_infinite_loop_hits_the_wall_timeout() -> None:
    """A program that never ends is killed at the wall timeout."""
    limits = Limits(cpu_seconds=30, memory_bytes=1024**3, file_bytes=1024**2, processes=64,
                    wall_seconds=2)
    result = run_python("while True:\n    pass", limits=limits)
    assert result.timed_out and not result.ok and result.exit_code is None


def test_cpu_limit_kills_a_busy_program() -> None:
    """A busy loop dies at its CPU-seconds limit before a generous wall timeout."""
    limits = Limits(cpu_seconds=1, memory_bytes=1024**3, file_bytes=1024**2, processes=64,
                    wall_seconds=60)
    result = run_python("while True:\n    pass", limits=limits)
    assert not result.timed_out and result.exit_code not in (0, None)


def test_huge_file_is_cut_at_the_size_limit() -> None:
    """Writing past RLIMIT_FSIZE fails; the output returned is at most the limit."""
    code = ("chunk = b'x' * 65536\nwith open(OUTPUT_PATH, 'wb') as f:\n"
            "    for _ in range(10_000):\n        f.write(chunk)")
    result = run_python(code, output_name="out.bin", limits=FAST)
    assert not result.ok
    data = result.output("out.bin")
    assert data is None or len(data) <= FAST.file_bytes


def test_memory_limit() -> None:
    """Allocating more than the address-space limit raises MemoryError in the program."""
    result = run_python("x = bytearray(3 * 1024**3)", limits=FAST)
    assert result.exit_code == 2 and "MemoryError" in result.stderr


def test_fork_bomb_is_contained() -> None:
    """A fork bomb ends (process limit, then timeout) and the host can still start processes."""
    if os.geteuid() == 0 and not isolation().drop_to_nobody:
        pytest.skip("RLIMIT_NPROC does not bind root and the sandbox cannot drop privileges here")
    limits = Limits(cpu_seconds=5, memory_bytes=1024**3, file_bytes=1024**2, processes=32,
                    wall_seconds=3)
    code = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    result = run_python(code, limits=limits)
    assert not result.ok
    after = subprocess.run([sys.executable, "-c", "print('alive')"], capture_output=True, text=True)
    assert after.stdout.strip() == "alive"


def test_symlinked_output_is_not_followed(tmp_path: Path) -> None:
    """An output path planted as a symlink to another file is not read back."""
    target = tmp_path / "host.txt"
    target.write_text("host data")
    os.chmod(tmp_path, 0o755)
    target.chmod(0o644)
    code = f"import os\nos.symlink({str(target)!r}, OUTPUT_PATH)"
    result = run_python(code, output_name="out.txt", limits=FAST)
    assert result.ok and result.output("out.txt") is None


def test_each_run_starts_in_a_fresh_directory() -> None:
    """A file written by one run is not there in the next."""
    first = run_python("open('left.txt', 'w').write('x')\nimport os\nprint(os.getcwd())", limits=FAST)
    second = run_python("import os\nprint(os.path.exists('left.txt'), os.getcwd())", limits=FAST)
    assert first.ok and second.ok
    exists, cwd = second.stdout.split()
    assert exists == "False" and cwd != first.stdout.strip()
