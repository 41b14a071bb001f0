"""Run untrusted Python (SpreadsheetBench solutions) in a separate, confined process.

Layers, each independent of the others:
- a fresh temporary directory per execution, deleted afterwards (no stale output can be scored);
- an environment built from an allow-list (no credentials, HOME points into the temp dir);
- rlimits set in `preexec_fn`: CPU seconds, address space, file size, process count, no core;
- a wall-clock timeout that kills the whole process group;
- no network: a fresh network namespace (`unshare -n`) when the kernel allows it, and always a
  runner that replaces the socket constructors before the solution runs;
- a PID namespace (`unshare -p -f --kill-child`) when allowed, so every forked process dies and
  is reaped with the run;
- when started as root, the child drops to `nobody` (`setpriv`), so root-only files such as
  /root/.aws stay unreadable and RLIMIT_NPROC is enforced.
`isolation()` reports which of the optional layers are active on this machine.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from attrs import field, frozen

NOBODY = 65534
_RUNNER = """\
import runpy, socket, sys, traceback
try:
    import _socket
except ImportError:
    _socket = None

def _refuse(*args, **kwargs):
    raise OSError("network access is disabled in the StraTune sandbox")

class _NoSocket(socket.socket):
    def __init__(self, *args, **kwargs):
        _refuse()

for _mod in (socket, _socket):
    if _mod is None:
        continue
    _mod.socket = _NoSocket
    for _name in ("create_connection", "socketpair", "fromfd", "getaddrinfo",
                  "gethostbyname", "gethostbyname_ex", "gethostbyaddr", "create_server"):
        if hasattr(_mod, _name):
            setattr(_mod, _name, _refuse)
del _mod

_globals = {"INPUT_PATH": sys.argv[2], "OUTPUT_PATH": sys.argv[3]}
try:
    runpy.run_path(sys.argv[1], init_globals=_globals, run_name="__main__")
except SystemExit:
    raise
except BaseException:
    traceback.print_exc()
    sys.exit(2)
"""


@frozen(kw_only=True)
class Limits:
    cpu_seconds: int = 60
    memory_bytes: int = 2 * 1024**3
    file_bytes: int = 64 * 1024**2
    processes: int = 64
    wall_seconds: float = 120.0


DEFAULT_LIMITS = Limits()


@frozen(kw_only=True)
class Isolation:
    network_namespace: bool
    pid_namespace: bool
    drop_to_nobody: bool

    def describe(self) -> str:
        net = "network namespace + socket patch" if self.network_namespace else "socket patch only"
        pid = "; own PID namespace" if self.pid_namespace else ""
        user = "runs as nobody" if self.drop_to_nobody else "runs as the invoking user"
        return f"{net}{pid}; {user}"


@frozen(kw_only=True)
class SandboxResult:
    exit_code: int | None  # None: killed at the wall timeout
    timed_out: bool
    stdout: str
    stderr: str
    outputs: tuple[tuple[str, bytes], ...] = field(default=(), converter=tuple)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def output(self, name: str) -> bytes | None:
        return next((data for n, data in self.outputs if n == name), None)


def _works(prefix: list[str]) -> bool:
    try:
        done = subprocess.run(
            [*prefix, sys.executable, "-I", "-c", "pass"],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.cache
def _prefixes() -> tuple[tuple[str, ...], Isolation]:
    """Probe once per process which optional layers this machine supports."""
    root = os.geteuid() == 0
    net: list[str] = []
    pid_ns = False
    if shutil.which("unshare"):
        base = ["unshare", "-n"] if root else ["unshare", "-r", "-n"]
        # A PID namespace as well when allowed: its init reaps every process the solution
        # forks, so nothing outlives the run (a host PID 1 that never reaps would keep zombies).
        for candidate in ([*base, "-p", "-f", "--kill-child", "--"], [*base, "--"]):
            if _works(candidate):
                net, pid_ns = candidate, "-p" in candidate
                break
    drop: list[str] = []
    if root and shutil.which("setpriv"):
        candidate = [
            "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"
        ]
        if _works([*net, *candidate]):
            drop = candidate
    iso = Isolation(network_namespace=bool(net), pid_namespace=pid_ns, drop_to_nobody=bool(drop))
    return tuple(net + drop), iso


def isolation() -> Isolation:
    return _prefixes()[1]


def _clean_env(home: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "OMP_NUM_THREADS": "1",
    }


def _set_limits(limits: Limits) -> None:
    pairs = (
        (resource.RLIMIT_CPU, limits.cpu_seconds),
        (resource.RLIMIT_AS, limits.memory_bytes),
        (resource.RLIMIT_FSIZE, limits.file_bytes),
        (resource.RLIMIT_NPROC, limits.processes),
        (resource.RLIMIT_CORE, 0),
    )
    for which, value in pairs:
        resource.setrlimit(which, (value, value))


def _read_regular(path: Path, cap: int) -> bytes | None:
    """Read an output file without following a symlink the solution may have planted."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return fh.read(cap)


def _tail(path: Path, limit: int = 2000) -> str:
    data = path.read_bytes() if path.exists() else b""
    return data[-limit:].decode("utf-8", "replace")


def run_python(
    code: str,
    *,
    inputs: Mapping[str, Path | bytes] | None = None,
    input_name: str = "input.xlsx",
    output_name: str = "output.xlsx",
    limits: Limits = DEFAULT_LIMITS,
) -> SandboxResult:
    """Run `code` with INPUT_PATH/OUTPUT_PATH set, cwd = a fresh directory holding `inputs`."""
    prefix, iso = _prefixes()
    base = Path(tempfile.mkdtemp(prefix="stratune-sbx-"))
    try:
        work = base / "work"
        work.mkdir()
        for name, source in (inputs or {}).items():
            target = work / Path(name).name
            if isinstance(source, bytes):
                target.write_bytes(source)
            else:
                shutil.copyfile(source, target)
        (base / "solution.py").write_text(code, encoding="utf-8")
        (base / "runner.py").write_text(_RUNNER, encoding="utf-8")
        if iso.drop_to_nobody:
            os.chmod(base, 0o755)
            for path in (work, *work.iterdir()):
                os.chown(path, NOBODY, NOBODY)
        argv = [
            *prefix,
            sys.executable,
            "-I",
            str(base / "runner.py"),
            str(base / "solution.py"),
            str(work / input_name),
            str(work / output_name),
        ]
        with open(base / "stdout", "wb") as out, open(base / "stderr", "wb") as err:
            proc = subprocess.Popen(
                argv,
                cwd=work,
                env=_clean_env(work),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
                preexec_fn=functools.partial(_set_limits, limits),  # noqa: PLW1509
            )
            timed_out = False
            try:
                code_ = proc.wait(timeout=limits.wall_seconds)
            except subprocess.TimeoutExpired:
                timed_out = True
                code_ = None
            # Kill the whole group either way: a finished parent may leave children behind.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            if timed_out:
                proc.wait()
        outputs = []
        data = _read_regular(work / output_name, limits.file_bytes)
        if data is not None:
            outputs.append((output_name, data))
        return SandboxResult(
            exit_code=code_,
            timed_out=timed_out,
            stdout=_tail(base / "stdout"),
            stderr=_tail(base / "stderr"),
            outputs=tuple(outputs),
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)
