"""The Landlock tier: for machines without bubblewrap or without user namespaces.

No namespaces are needed. Landlock (through `py-landlock`) limits the program to reading the
system and interpreter directories and writing its own work directory, forbids TCP, and
scopes signals and abstract unix sockets to the run; a seccomp filter (`pyseccomp`) refuses
`socket()` itself, which also closes unix socket files and UDP; `supervisor.py` kills every
descendant at the end. Root runs lose every capability and run as `nobody` where nobody can
run the interpreter (else they keep uid 0); they need a cgroup for the process limit.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from replay.tasks.sandbox import syscalls
from replay.tasks.sandbox.layout import (
    DEVICES,
    NOBODY,
    SYSTEM_DIRS,
    SYSTEM_FILES,
    RunDir,
    interpreter_roots,
)
from replay.tasks.sandbox.limits import Limits

SUPERVISOR = Path(__file__).with_name("supervisor.py")
MIN_ABI = 6  # signal and abstract-socket scoping
THREAD_SLACK = 8  # a bound on what a fork bomb gains too: keep it small
# Threads the caller keeps for each run under way (the work-directory watcher and the two pipe
# readers of `communicate`), which start while another run counts the user's tasks.
CALLER_THREADS = 3


def abi_version() -> int:
    """The kernel's Landlock ABI, 0 when absent or the binding is not installed."""
    try:
        from py_landlock import get_abi_version
    except ImportError:
        return 0
    try:
        return int(get_abi_version())
    except Exception:  # LandlockNotAvailableError / disabled at boot
        return 0


def missing_parts() -> str:
    """'' when this tier can run, else what is missing."""
    abi = abi_version()
    if abi < MIN_ABI:
        return f"Landlock ABI {abi} (need {MIN_ABI}: Linux 6.12+ and `pip install py-landlock`)"
    try:
        import pyseccomp  # noqa: F401 - loads libseccomp
    except (ImportError, RuntimeError, OSError) as exc:
        return f"seccomp binding unusable ({exc}): pip install pyseccomp, apt-get install libseccomp2"
    if os.geteuid() == 0 and not os.access("/usr/bin/setpriv", os.X_OK):
        return "setpriv (util-linux) not found"
    return ""


def user_task_count() -> int:
    """Tasks (threads included, as RLIMIT_NPROC counts them) the user has now, plus room for
    threads the caller starts while the run begins (thread pools grow on demand)."""
    uid = os.getuid()
    count = 0
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid:
                count += len(os.listdir(f"/proc/{entry}/task"))
        except OSError:
            continue
    return count + THREAD_SLACK


def closed_ancestors() -> dict[str, list[str]]:
    """The outermost directory closed to others (a 0700 /root) above each interpreter root,
    with the roots beneath it; a root itself closed maps to itself (nothing can open it)."""
    closed: dict[str, list[str]] = {}
    for root in interpreter_roots():
        for step in (*reversed(root.parents), root):
            if step != Path("/") and not os.stat(step).st_mode & stat.S_IXOTH:
                closed.setdefault(str(step), []).append(str(root))
                break
    return closed


_UNCOVER_PROBE = """
import ctypes, os, sys, tempfile
libc = ctypes.CDLL(None, use_errno=True)
target = tempfile.mkdtemp()
ok = (libc.unshare(0x20000) == 0 and libc.mount(None, b"/", None, 0x4000 | 0x40000, None) == 0
      and libc.mount(b"tmpfs", target.encode(), b"tmpfs", 0, b"size=64k") == 0)
libc.umount2(target.encode(), 2)
os.rmdir(target)
sys.exit(0 if ok else 1)
"""


@functools.cache
def program_uid() -> int:
    """The uid the program runs as. A user's runs keep theirs. Root's run as nobody when
    nobody can reach the interpreter, directly or through a private mount namespace that
    opens the closed directories above it (see the supervisor); else as uid 0 without
    capabilities."""
    if os.geteuid() != 0:
        return os.geteuid()
    closed = closed_ancestors()
    if not closed:
        return NOBODY
    if any(str(r) in closed for r in interpreter_roots()):
        return 0
    probe = subprocess.run([sys.executable, "-I", "-c", _UNCOVER_PROBE], capture_output=True,
                           timeout=30, check=False)
    return NOBODY if probe.returncode == 0 else 0


_FLIGHT_LOCK = threading.Lock()
_FLIGHT = [0]  # runs of this process under way


@contextlib.contextmanager
def in_flight() -> Iterator[int]:
    """Count a run as under way; yields how many others are. RLIMIT_NPROC counts the user's
    tasks, so each of them may add its supervisor and processes while this one starts."""
    with _FLIGHT_LOCK:
        others = _FLIGHT[0]
        _FLIGHT[0] += 1
    try:
        yield others
    finally:
        with _FLIGHT_LOCK:
            _FLIGHT[0] -= 1


def command(run: RunDir, argv: list[str], env: dict[str, str], limits: Limits,
            *, cgroup: bool, others: int = 0) -> list[str]:
    """Write the supervisor's config into the run directory; return its argv."""
    roots = [str(r) for r in interpreter_roots()]
    dirs = [d for d in SYSTEM_DIRS if os.path.isdir(d)]
    nproc_base = 0
    share = limits.per_process(cgroup=False)[1] + 1  # a run's processes and supervisor
    if not cgroup and os.geteuid() != 0:
        # only until the program's first fork: from then on the supervisor counts (notify.py)
        nproc_base = user_task_count() + others * (share + CALLER_THREADS)
    cfg = {
        "parent": os.getpid(),
        "argv": argv,
        "env": env,
        "work": str(run.work),
        "prog": str(run.prog),
        "read_dirs": dirs + roots,
        "exec_dirs": dirs + roots,
        "read_files": [f for f in SYSTEM_FILES if os.path.isfile(f)],
        "devices": [d for d in DEVICES if os.path.exists(d)],
        "rlimits": [list(p) for p in limits.rlimits(cgroup=cgroup, nproc_base=nproc_base)],
        "wall_seconds": limits.wall_seconds,
        "result": str(run.base / "result.json"),
        "seccomp": str(run.base / "seccomp.bpf"),
        "uid": program_uid(),
        "notify": syscalls.notified_numbers(),
        "seccomp_nr": syscalls.number("seccomp"),
        "share": None if cgroup else share,
        "nproc_uid": program_uid() if os.geteuid() == 0 else os.geteuid(),
        "uncover": closed_ancestors() if os.geteuid() == 0 and program_uid() == NOBODY else {},
    }
    (run.base / "seccomp.bpf").write_bytes(syscalls.compiled(landlock=True))
    config = run.base / "supervisor.json"
    config.write_text(json.dumps(cfg))
    return [sys.executable, "-I", str(SUPERVISOR), str(config)]
