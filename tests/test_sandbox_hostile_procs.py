"""Hostile programs against every sandbox tier, processes and sockets: setsid
survivors, unix sockets, the socket-patch bypass, host /proc and signals, a fork bomb, and
memory spread over processes. Each is blocked or contained (as root and as a dropped uid).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from replay.tasks.sandbox import Limits, TierName, run_python
from tests.sandbox_fixtures import FAST, TIER_PARAMS, tier_or_skip
from tests.sandbox_probes import pids_with

pytestmark = pytest.mark.parametrize("tier_name", TIER_PARAMS)


def _run(code: str, tier_name: TierName, limits: Limits = FAST, **kw: object):  # noqa: ANN202
    return run_python(code, limits=limits, tier=tier_or_skip(tier_name), **kw)


SURVIVOR = '''
import os, subprocess, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        subprocess.Popen([sys.executable, "-c",
                          "import time, glob, os\\n"
                          "time.sleep(1.5)\\n"
                          "for d in glob.glob('/tmp/stratune-run-*/work') + glob.glob('/.stratune/work'):\\n"
                          "    try: open(os.path.join(d, 'output.txt'), 'w').write('FORGED')\\n"
                          "    except OSError: pass\\n"
                          "time.sleep(30)", "TOKEN"], start_new_session=True)
    os._exit(0)
time.sleep(SLEEP)
'''


@pytest.mark.parametrize("sleep", [0, 60], ids=["exits", "times-out"])
def test_setsid_survivors_die_with_the_run(tier_name: TierName, sleep: int) -> None:
    """Grandchildren that call setsid() are gone once the run returns, whether the program
    exits at once or is killed at its wall timeout; the next run's output is its own."""
    token = f"stratune-survivor-{os.getpid()}-{time.monotonic_ns()}"
    limits = Limits(cpu_seconds=10, memory_bytes=1024**3, processes=32, wall_seconds=2)
    code = SURVIVOR.replace("TOKEN", token).replace("SLEEP", str(sleep))
    first = _run(code, tier_name, limits=limits)
    assert first.timed_out is bool(sleep)
    assert pids_with(token) == []
    second = _run("import time\ntime.sleep(2)\nopen(OUTPUT_PATH, 'w').write('honest')",
                  tier_name, output_name="output.txt")
    assert second.ok and second.output("output.txt") == b"honest"
    assert pids_with(token) == []


@pytest.fixture
def unix_listeners(tmp_path: Path) -> Iterator[tuple[str, str, list[bytes]]]:
    """A unix socket file everyone may connect to, and an abstract one; what arrives is kept."""
    os.chmod(tmp_path, 0o755)
    path = str(tmp_path / "host.sock")
    abstract = f"\0stratune-probe-{os.getpid()}"
    servers = []
    for address in (path, abstract):
        server = socket.socket(socket.AF_UNIX)
        server.bind(address)
        server.listen()
        server.settimeout(0.1)
        servers.append(server)
    os.chmod(path, 0o777)
    received: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            for server in servers:
                try:
                    conn, _ = server.accept()
                except OSError:
                    continue
                with conn:
                    received.append(conn.recv(100) or b"<connected>")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path, abstract, received
    stop.set()
    thread.join()
    for server in servers:
        server.close()


def test_unix_sockets_on_the_host_are_unreachable(
    unix_listeners: tuple[str, str, list[bytes]], tier_name: TierName
) -> None:
    """Connecting to a world-writable unix socket file or an abstract socket fails."""
    path, abstract, received = unix_listeners
    code = (
        "import socket\n"
        f"for address in [{path!r}, {abstract!r}]:\n"
        "    try:\n        s = socket.socket(socket.AF_UNIX)\n        s.connect(address)\n"
        "        s.send(b'escaped')\n        print('CONNECTED')\n"
        "    except OSError as exc:\n        print('REFUSED', type(exc).__name__)\n"
    )
    result = _run(code, tier_name)
    assert result.ok, result.stderr
    assert result.stdout.count("REFUSED") == 2 and "CONNECTED" not in result.stdout
    time.sleep(0.3)
    assert received == []


def test_socket_patch_bypass_still_has_no_network(tier_name: TierName) -> None:
    """`socket.socket.__mro__[2]` (the raw C socket type) cannot reach a local TCP server:
    the namespace or the seccomp filter holds, not a monkeypatch."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.1)
    port = server.getsockname()[1]
    code = (
        "import socket\nraw = socket.socket.__mro__[1]  # _socket.socket, below any patch\n"
        "try:\n    s = raw(socket.AF_INET, socket.SOCK_STREAM)\n"
        f"    s.settimeout(2)\n    s.connect(('127.0.0.1', {port}))\n    print('CONNECTED')\n"
        "except OSError as exc:\n    print('REFUSED', type(exc).__name__)\n"
    )
    try:
        result = _run(code, tier_name)
        with pytest.raises(OSError):
            server.accept()
    finally:
        server.close()
    assert result.ok, result.stderr
    assert "REFUSED" in result.stdout


def test_host_processes_are_invisible_and_unsignalable(tier_name: TierName) -> None:
    """The host's /proc is not visible, and the test process cannot be signalled."""
    code = (
        "import os, signal\n"
        "try:\n    pids = [p for p in os.listdir('/proc') if p.isdigit()]\n"
        "    print('PIDS', len(pids))\nexcept OSError as exc:\n    print('NOPROC', type(exc).__name__)\n"
        f"try:\n    os.kill({os.getpid()}, signal.SIGTERM)\n    print('SIGNALLED')\n"
        "except OSError as exc:\n    print('NOSIGNAL', type(exc).__name__)\n"
    )
    result = _run(code, tier_name)
    assert result.ok, result.stderr
    assert "SIGNALLED" not in result.stdout
    first = result.stdout.split()
    assert first[0] == "NOPROC" or (first[0] == "PIDS" and int(first[1]) <= 4), result.stdout


def test_fork_bomb_is_held_by_the_run_process_limit(tier_name: TierName) -> None:
    """A fork bomb stops at the per-run process limit, ends with the run, and the host
    can still start processes."""
    limits = Limits(cpu_seconds=5, memory_bytes=1024**3, processes=16, wall_seconds=3)
    code = ("import os, time\nmade = 0\nfor _ in range(500):\n    try:\n"
            "        if os.fork() == 0:\n            time.sleep(30)\n            os._exit(0)\n"
            "        made += 1\n    except OSError:\n        break\nprint('MADE', made)\n")
    result = _run(code, tier_name, limits=limits)
    assert result.ok, result.stderr
    assert int(result.stdout.split()[1]) < limits.processes


def test_memory_is_limited_per_run_not_per_process(tier_name: TierName) -> None:
    """Six processes each trying to hold 300 MB under a 1 GiB run limit: at most the run's
    total is ever held at once."""
    code = (
        "import os, time\nkids = []\n"
        "for _ in range(6):\n    try:\n        pid = os.fork()\n    except OSError:\n        break\n"
        "    if pid == 0:\n        try:\n            block = bytearray(300 * 1024 * 1024)\n"
        "            block[::4096] = b'x' * len(block[::4096])\n            time.sleep(3)\n"
        "            os._exit(7)\n        except MemoryError:\n            os._exit(0)\n"
        "    kids.append(pid)\n"
        "held = sum(os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) == 7 for p in kids)\n"
        "print('HELD', held)\n"
    )
    result = _run(code, tier_name)
    held = int(result.stdout.split()[1]) if result.stdout.startswith("HELD") else 0
    assert held * 300 <= 1024
