"""Hostile programs for the kernel-facing classes: /proc/sys and the uid map, file metadata,
SysV IPC, the disk, ptrace and namespaces, file handles. Shared by the tests (which assert
none escapes) and `benchmarks/sandbox_probes.py` (which prints the table per setting).

A probe prints `ESCAPED <what>` when the kernel let it through and `BLOCKED <what>` when it
was refused; the host adds its own findings (a file's mode changed, a segment left behind).
Verdicts: escaped if anything escaped; contained if the run was stopped by a limit, timed
out or failed; blocked otherwise.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from attrs import frozen

from replay.tasks.sandbox import Limits, SandboxResult, Tier, run_python

PROC_SYS = r'''
import os
for path in ("/proc/sys/kernel/printk_ratelimit_burst", "/proc/sys/kernel/core_pattern",
             "/proc/sysrq-trigger", "/proc/sys/vm/drop_caches"):
    try:
        fd = os.open(path, os.O_WRONLY)  # opened only: nothing is ever written
        os.close(fd)
        print("ESCAPED open-for-write", path)
    except OSError as exc:
        print("BLOCKED", path, exc.errno)
try:
    data = open("/proc/kallsyms").read(4096)
    print("ESCAPED kallsyms" if data.strip() else "BLOCKED kallsyms-empty")
except OSError:
    print("BLOCKED kallsyms")
try:
    mounts = open("/proc/self/mountinfo").read()
    print("LEAK host-run-path" if "stratune-run-" in mounts else "BLOCKED mountinfo")
except OSError:
    print("BLOCKED mountinfo")
import subprocess, sys  # a child the host can find by its argument, to read its real uid
subprocess.run([sys.executable, "-c", "import time; time.sleep(1.5)", TOKEN])
'''

METADATA = r'''
import os
for path in TARGETS:
    for what, act in (("chmod", lambda: os.chmod(path, 0o4777)),
                      ("chown", lambda: os.chown(path, 0, 0)),
                      ("utime", lambda: os.utime(path, (1, 1))),
                      ("setxattr", lambda: os.setxattr(path, "user.stratune", b"x")),
                      ("removexattr", lambda: os.removexattr(path, "user.keep"))):
        try:
            act()
            print("CALLED", what, path)  # the host checks whether anything changed
        except OSError as exc:
            print("BLOCKED", what, exc.errno)
'''

SYSV_IPC = r'''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
host = libc.shmget(HOST_KEY, 0, 0)
if host >= 0:
    addr = libc.shmat(host, None, 0o10000)  # SHM_RDONLY
    if addr not in (None, ctypes.c_void_p(-1).value):
        print("ESCAPED attached", ctypes.string_at(addr, 16))
    else:
        print("ESCAPED found-host-segment", host)
else:
    print("BLOCKED shmget-host", ctypes.get_errno())
for key in LEAVE_KEYS:
    made = libc.shmget(key, 64 * 1024 * 1024, 0o1000 | 0o600)  # IPC_CREAT
    print("MADE" if made >= 0 else "BLOCKED", "shm", key, ctypes.get_errno())
for call, args in (("msgget", (LEAVE_KEYS[0], 0o1000 | 0o600)),
                   ("semget", (LEAVE_KEYS[0], 1, 0o1000 | 0o600))):
    made = getattr(libc, call)(*args)
    print("MADE" if made >= 0 else "BLOCKED", call, ctypes.get_errno())
'''

DISK = r'''
import os
try:
    fd = os.open("reserve", os.O_CREAT | os.O_WRONLY, 0o600)
    os.posix_fallocate(fd, 0, 2 * 1024**3)
    print("RESERVED", os.fstat(fd).st_blocks * 512)
except OSError as exc:
    print("BLOCKED fallocate", exc.errno)
try:
    os.unlink("reserve")
except OSError:
    pass
written = 0
chunk = b"x" * (1 << 20)
try:
    for k in range(320):
        with open(f"fill-{k // 4}", "ab") as fh:
            fh.write(chunk)
        written += len(chunk)
    print("WROTE", written)
except OSError as exc:
    print("BLOCKED write", exc.errno, written)
'''

PTRACE_AND_NAMESPACES = r'''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
PTRACE_ATTACH, CLONE_NEWUSER, SIGCHLD = 16, 0x10000000, 17
for target in (1, os.getppid()):
    if libc.ptrace(PTRACE_ATTACH, target, None, None) == 0:
        print("ESCAPED ptrace", target)
    else:
        print("BLOCKED ptrace", target, ctypes.get_errno())
pid = libc.syscall(56, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)  # clone on x86_64
if pid == 0:
    os._exit(0)
if pid > 0:
    os.waitpid(pid, 0)
    print("ESCAPED clone-newuser")
else:
    print("BLOCKED clone-newuser", ctypes.get_errno())
if libc.unshare(CLONE_NEWUSER) == 0:
    print("ESCAPED unshare-newuser")
else:
    print("BLOCKED unshare-newuser", ctypes.get_errno())
'''

GOLD_METADATA = r'''
import ctypes, os
try:
    fd = os.open(GOLD, os.O_PATH)
    print("ESCAPED o_path", os.fstat(fd).st_size)
except OSError as exc:
    print("BLOCKED o_path", exc.errno)
libc = ctypes.CDLL(None, use_errno=True)
handle = ctypes.create_string_buffer(8 + 128)
ctypes.memmove(handle, (128).to_bytes(4, "little"), 4)
mount_id = ctypes.c_int()
if libc.name_to_handle_at(-100, GOLD.encode(), handle, ctypes.byref(mount_id), 0) == 0:
    print("ESCAPED name_to_handle_at")
else:
    print("BLOCKED name_to_handle_at", ctypes.get_errno())
try:
    info = os.stat(GOLD)
    print("STAT", info.st_size, int(info.st_mtime))
except OSError as exc:
    print("BLOCKED stat", exc.errno)
'''


@frozen
class Outcome:
    verdict: str  # blocked | contained | escaped
    escapes: tuple[str, ...]
    result: SandboxResult


def verdict(result: SandboxResult, host_escapes: list[str] | tuple[str, ...] = ()) -> Outcome:
    escapes = [line for line in result.stdout.splitlines() if line.startswith("ESCAPED")]
    escapes += list(host_escapes)
    if escapes:
        return Outcome("escaped", tuple(escapes), result)
    stopped = result.limit or result.timed_out or result.exit_code != 0
    return Outcome("contained" if stopped else "blocked", (), result)


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def shm_exists(key: int) -> bool:
    return _libc().shmget(key, 0, 0) >= 0


def shm_remove(key: int) -> None:
    libc = _libc()
    ident = libc.shmget(key, 0, 0)
    if ident >= 0:
        libc.shmctl(ident, 0, None)  # IPC_RMID


def pids_with(token: str) -> list[int]:
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


def _host_uids(pids: list[int]) -> set[int]:
    uids = set()
    for pid in pids:
        with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as fh:
            uids.update(int(line.split()[1]) for line in fh if line.startswith("Uid:"))
    return uids


def probe_proc_sys(tier: Tier, limits: Limits) -> Outcome:
    """Kernel settings opened for writing, kallsyms, and (seen from the host) whether the
    program's processes run as host uid 0. A run-directory path in mountinfo is a LEAK line:
    only a root run can keep it out (see the README)."""
    token = f"stratune-uid-probe-{os.getpid()}-{time.monotonic_ns()}"
    seen: set[int] = set()
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            seen.update(_host_uids(pids_with(token)))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = run_python(f"TOKEN = {token!r}\n{PROC_SYS}", limits=limits, tier=tier)
    finally:
        stop.set()
        watcher.join()
    found = ["no process of the program seen"] if not seen else []
    return verdict(result, [*found, *(["runs as host uid 0"] if 0 in seen else [])])


def probe_metadata(tier: Tier, limits: Limits, targets: list[Path]) -> Outcome:
    """chmod 4777, chown to root, utime, setxattr and removexattr on files outside the run
    that the caller owns (one of them the answer workbook; each gets a `user.keep` attribute
    where the file system has them): escaped when any of them changed."""
    before = {}
    for path in targets:
        with contextlib.suppress(OSError):
            os.setxattr(path, "user.keep", b"1")
        info = os.stat(path)
        before[path] = (info.st_mode, info.st_uid, info.st_mtime_ns, _xattrs(path))
    result = run_python(f"TARGETS = {[str(p) for p in targets]!r}\n{METADATA}", limits=limits,
                        tier=tier)
    changed = []
    for path, was in before.items():
        info = os.stat(path)
        if (info.st_mode, info.st_uid, info.st_mtime_ns, _xattrs(path)) != was:
            changed.append(f"changed {path}")
    return verdict(result, changed)


def _xattrs(path: Path) -> tuple[str, ...]:
    try:
        return tuple(sorted(os.listxattr(path)))
    except OSError:
        return ()


def probe_sysv_ipc(tier: Tier, limits: Limits) -> Outcome:
    """A 0600 segment of the caller's holds a secret; the program looks for it and leaves
    three 64 MiB segments of its own behind."""
    base = 0x5A000000 + (os.getpid() & 0xFFFF) * 16 + (time.monotonic_ns() & 0xF)
    host_key, leave = base, [base + 1, base + 2, base + 3]
    libc = _libc()
    libc.shmat.restype = ctypes.c_void_p
    ident = libc.shmget(host_key, 4096, 0o1000 | 0o600)
    if ident < 0:
        raise OSError(ctypes.get_errno(), "shmget for the probe's own segment")
    addr = libc.shmat(ident, None, 0)
    ctypes.memmove(addr, b"HOST-SECRET-0123", 16)
    libc.shmdt(ctypes.c_void_p(addr))
    try:
        code = f"HOST_KEY = {host_key}\nLEAVE_KEYS = {leave!r}\n{SYSV_IPC}"
        result = run_python(code, limits=limits, tier=tier)
        left = [f"segment {key:#x} left on the host" for key in leave if shm_exists(key)]
    finally:
        for key in (host_key, *leave):
            shm_remove(key)
    return verdict(result, left)


def probe_disk(tier: Tier, limits: Limits, run_dirs: Callable[[], list[Path]]) -> Outcome:
    """2 GiB reserved with fallocate, then 320 MiB of writes (4 MiB files), exit 0. Escaped
    when the run ends ok with more than the work limit written, or its directory stays."""
    result = run_python(DISK, limits=limits, tier=tier)
    escapes = []
    for line in result.stdout.splitlines():
        words = line.split()
        if words[0] in ("RESERVED", "WROTE") and int(words[-1]) > limits.work_bytes and result.ok:
            escapes.append(f"{line} past the {limits.work_bytes >> 20} MiB limit")
    escapes += [f"run directory {d} left" for d in run_dirs() if d.exists()]
    return verdict(result, escapes)


def probe_ptrace_and_namespaces(tier: Tier, limits: Limits) -> Outcome:
    """PTRACE_ATTACH to pid 1 and to the parent, a clone and an unshare with CLONE_NEWUSER;
    a run stalled until its wall limit counts as escaped."""
    result = run_python(PTRACE_AND_NAMESPACES, limits=limits, tier=tier)
    stalled = ["stalled until the wall limit"] if result.timed_out else []
    return verdict(result, stalled)


def probe_gold_metadata(tier: Tier, limits: Limits, gold: Path) -> Outcome:
    """O_PATH and file handles must fail; `stat` is reported as its own line (STAT) since
    only bubblewrap can hide a path's existence."""
    return verdict(run_python(f"GOLD = {str(gold)!r}\n{GOLD_METADATA}", limits=limits, tier=tier))



OUTPUT_SHAPES = r'''
import os
os.mkdir(OUTPUT_PATH)
name = "d" * 200
for level in range(1500):
    os.mkdir(name)
    os.chdir(name)
'''


def probe_output_shapes(tier: Tier, limits: Limits, run_dirs: Callable[[], list[Path]]) -> Outcome:
    """A directory at OUTPUT_PATH and a 1,500-level tree: contained when the run returns
    (no exception), the output is refused with a reason and the run directory is gone."""
    try:
        result = run_python(OUTPUT_SHAPES, limits=limits, tier=tier)
    except (OSError, RecursionError) as exc:
        raise AssertionError(f"the run itself failed: {exc!r}") from exc
    escapes = [f"run directory {d} left" for d in run_dirs() if d.exists()]
    if result.outputs or not result.output_problem:
        escapes.append("a directory was read back as the output")
    outcome = verdict(result, escapes)
    return outcome if escapes else Outcome("contained", (), result)
