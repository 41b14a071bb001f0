"""Hostile programs against every sandbox tier (issue 18): each is blocked or contained.

Run as root by `make test`, and again as an ordinary user (a dropped uid) by
`test_sandbox_as_user.py`. Every probe runs once per tier this machine offers.
"""

from __future__ import annotations

import glob
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_cache.records import Response
from replay.tasks import spreadsheet
from replay.tasks.sandbox import Limits, TierName, run_python
from tests.sandbox_fixtures import FAST, GOOD, TIER_PARAMS, tier_or_skip, write_layout

pytestmark = pytest.mark.parametrize("tier_name", TIER_PARAMS)


def _run(code: str, tier_name: TierName, limits: Limits = FAST, **kw: object):  # noqa: ANN202
    return run_python(code, limits=limits, tier=tier_or_skip(tier_name), **kw)


def _alive_with(token: str) -> list[int]:
    """PIDs on the host whose command line holds `token`."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                if token.encode() in fh.read():
                    found.append(int(entry))
        except (OSError, ValueError):
            continue
    return found


FORGE = r'''
import os, shutil, time
found, start = [], time.monotonic()
for top in ("/tmp", "/root", "/home", "/work", "/", os.path.dirname(os.getcwd())):
    for root, dirs, files in os.walk(top, onerror=lambda exc: None):
        found += [os.path.join(root, f) for f in files if f.endswith("_answer.xlsx")]
        dirs[:] = [d for d in dirs if d not in ("proc", "sys", "usr")]
        if time.monotonic() - start > 1:
            break
for known in KNOWN:
    if os.path.exists(known):
        found.append(known)
print("FOUND", found)
for path in found:
    try:
        shutil.copyfile(path, OUTPUT_PATH)
        print("COPIED", path)
        break
    except OSError as exc:
        print("DENIED", path, exc)
'''


def test_forging_by_copying_the_answer_scores_zero(tmp_path: Path, tier_name: TierName) -> None:
    """A program that hunts for `*_answer.xlsx` (by walking / and by its known path) finds
    nothing it can read, so copying it cannot forge a score; the honest program scores 1."""
    tier_or_skip(tier_name)
    root = write_layout(tmp_path / "data")
    task = spreadsheet.load(root, limits=FAST, sandbox=tier_name)
    sample = task.split("train")[0]
    known = [str(c.gold_path) for c in sample.payload.cases]
    code = f"KNOWN = {known!r}\n{FORGE}"
    result = _run(code, tier_name, inputs={"1_t1_input.xlsx": sample.payload.cases[0].input_path},
                  input_name="1_t1_input.xlsx")
    assert "COPIED" not in result.stdout, result.stdout
    forged = task.score(sample, (Response(text=f"```python\n{code}\n```"),))
    assert forged.value == 0.0
    honest = task.score(sample, (Response(text=GOOD),))
    assert (honest.value, honest.aux) == (1.0, 1.0)


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
    assert _alive_with(token) == []
    second = _run("import time\ntime.sleep(2)\nopen(OUTPUT_PATH, 'w').write('honest')",
                  tier_name, output_name="output.txt")
    assert second.ok and second.output("output.txt") == b"honest"
    assert _alive_with(token) == []


def test_cross_run_write_is_refused(tier_name: TierName) -> None:
    """While one run is in progress, another cannot read or write its work directory, even
    given its real host path."""
    tier = tier_or_skip(tier_name)
    before = set(glob.glob("/tmp/stratune-run-*"))
    holder: dict[str, object] = {}
    victim = threading.Thread(target=lambda: holder.update(r=run_python(
        "import time\nopen('mine.txt', 'w').write('victim')\ntime.sleep(3)\n"
        "print(open('mine.txt').read(), sorted(__import__('os').listdir('.')))",
        limits=FAST, tier=tier)))
    victim.start()
    deadline = time.monotonic() + 10
    while not (new := set(glob.glob("/tmp/stratune-run-*")) - before) and time.monotonic() < deadline:
        time.sleep(0.05)
    targets = [f"{d}/work" for d in new]
    assert targets, "the victim run did not start"
    attack = (f"import os\nfor d in {targets!r}:\n"
              "    for name in ('mine.txt', 'output.xlsx'):\n"
              "        try:\n            open(os.path.join(d, name), 'w').write('FORGED')\n"
              "            print('WROTE', d)\n        except OSError as exc:\n"
              "            print('DENIED', type(exc).__name__)\n"
              "    try:\n        print('LISTED', os.listdir(d))\n"
              "    except OSError as exc:\n        print('DENIED', type(exc).__name__)\n")
    result = _run(attack, tier_name)
    victim.join()
    assert result.ok, result.stderr
    assert "WROTE" not in result.stdout and "LISTED" not in result.stdout
    victim_out = holder["r"].stdout  # type: ignore[attr-defined]
    assert victim_out.startswith("victim [") and "output.xlsx" not in victim_out


def test_credentials_home_and_project_are_out_of_reach(
    tmp_path: Path, tier_name: TierName, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 0600 ~/.aws/credentials, ~/.bashrc, the project and the LLM cache: nothing read,
    nothing written (HOME is a temporary fixture, never the real one)."""
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    creds = home / ".aws" / "credentials"
    creds.write_text("aws_secret_access_key = SECRET-XYZ\n")
    creds.chmod(0o600)
    bashrc = home / ".bashrc"
    bashrc.write_text("# rc\n")
    monkeypatch.setenv("HOME", str(home))
    project = Path(__file__).resolve().parents[1]
    cache = project / ".stratune-cache-probe"
    code = (
        "import os\n"
        f"for path in [{str(creds)!r}, os.path.expanduser('~/.aws/credentials'),\n"
        f"             {str(project / 'pyproject.toml')!r}, {str(project / 'README.md')!r}]:\n"
        "    try:\n        print('READ', path, open(path).read()[:40])\n"
        "    except OSError as exc:\n        print('DENIED', type(exc).__name__)\n"
        f"for path in [{str(bashrc)!r}, {str(cache)!r}, {str(project / 'evil.py')!r},\n"
        "             os.path.join(os.path.dirname(os.path.dirname(__import__('sys').executable)), 'evil')]:\n"
        "    try:\n        open(path, 'a').write('pwned')\n        print('WROTE', path)\n"
        "    except OSError as exc:\n        print('DENIED', type(exc).__name__)\n"
    )
    result = _run(code, tier_name)
    assert result.ok, result.stderr
    assert "READ" not in result.stdout and "WROTE" not in result.stdout
    assert "SECRET-XYZ" not in result.stdout
    assert bashrc.read_text() == "# rc\n"
    assert not cache.exists() and not (project / "evil.py").exists()


FLOOD = '''
import os
report = {}
for d in ("/tmp", "/var/tmp", "/dev/shm", os.environ.get("TMPDIR", "/tmp")):
    made = size = 0
    try:
        for k in range(20000):
            with open(os.path.join(d, f"TOKEN-{k}"), "wb") as fh:
                if size < 240 * 1024 * 1024:
                    fh.write(b"x" * 1024 * 1024)
                    size += 1024 * 1024
            made += 1
    except OSError as exc:
        report[d] = (made, type(exc).__name__)
    else:
        report[d] = (made, "no error")
print(report)
'''


def test_tmp_and_shm_floods_leave_nothing_behind(tier_name: TierName) -> None:
    """20,000 files and 240 MB into /tmp, /var/tmp and /dev/shm: refused or capped at the
    private tmpfs size, and nothing of it is left on the host afterwards."""
    token = f"stratune-flood-{os.getpid()}-{time.monotonic_ns()}"
    result = _run(FLOOD.replace("TOKEN", token), tier_name)
    if result.ok:  # else the work-directory watch stopped a flood into TMPDIR: contained
        report = eval(result.stdout)  # the program printed a dict literal of ints and names
        for made, outcome in report.values():
            assert outcome != "no error" and made < 20000
    else:
        assert result.limit.startswith("work directory"), result
    leftovers = [p for d in ("/tmp", "/var/tmp", "/dev/shm") for p in glob.glob(f"{d}/{token}*")]
    assert leftovers == []


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


def test_far_cell_workbook_is_scored_by_its_answer_cells(tmp_path: Path, tier_name: TierName) -> None:
    """A program whose output sets XFD1048576 (17 billion cells as a rectangle) is scored
    by reading its answer cell only: right answer 1, wrong answer 0, both quickly."""
    tier_or_skip(tier_name)
    task = spreadsheet.load(write_layout(tmp_path / "data"), limits=FAST, sandbox=tier_name)
    sample = task.split("train")[0]
    far = GOOD.replace("wb.save(OUTPUT_PATH)", "ws['XFD1048576'] = 'far'\nwb.save(OUTPUT_PATH)")
    assert task.score(sample, (Response(text=far),)).value == 1.0
    wrong = far.replace("ws[\"B5\"] = sum(", "ws[\"B5\"] = 1 + sum(")
    assert task.score(sample, (Response(text=wrong),)).value == 0.0
