"""The Landlock tier: for machines without bubblewrap or without user namespaces.

No namespaces are needed. Landlock (through `py-landlock`) limits the program to reading the
system and interpreter directories and writing its own work directory, forbids TCP, and
scopes signals and abstract unix sockets to the run; a seccomp filter (`pyseccomp`) refuses
`socket()` itself, which also closes unix socket files and UDP; `supervisor.py` kills every
descendant at the end. Root runs keep uid 0 but lose every capability, and need a cgroup for
the process limit (RLIMIT_NPROC does not bind uid 0).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from replay.tasks.sandbox.layout import (
    DEVICES,
    SYSTEM_DIRS,
    SYSTEM_FILES,
    RunDir,
    interpreter_roots,
)
from replay.tasks.sandbox.limits import Limits

SUPERVISOR = Path(__file__).with_name("supervisor.py")
MIN_ABI = 6  # signal and abstract-socket scoping


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


def user_process_count() -> int:
    uid = os.getuid()
    count = 0
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid:
                count += 1
        except OSError:
            continue
    return count


def command(run: RunDir, argv: list[str], env: dict[str, str], limits: Limits,
            *, cgroup: bool) -> list[str]:
    """Write the supervisor's config into the run directory; return its argv."""
    roots = [str(r) for r in interpreter_roots()]
    dirs = [d for d in SYSTEM_DIRS if os.path.isdir(d)]
    nproc_base = 0 if cgroup or os.geteuid() == 0 else user_process_count()
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
    }
    config = run.base / "supervisor.json"
    config.write_text(json.dumps(cfg))
    return [sys.executable, "-I", str(SUPERVISOR), str(config)]
