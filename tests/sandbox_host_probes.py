"""Hostile programs that reach for the host's shared kernel state: processes of the program's
own uid, POSIX IPC objects, and memory that RLIMIT_AS does not count. Shared by
`test_sandbox_hostile_host.py` and `benchmarks/sandbox_probes.py`; same conventions as
`sandbox_probes.py` (ESCAPED / BLOCKED lines, host findings added to the verdict).

Every target is one the probe made itself: sleepers it starts as the program's uid, the
caller, and the program's own supervisor. Calls that would act on every process of a uid are
made only after the read-only form of the same call was refused, so a sandbox that lets them
through shows it on the read and changes nobody else's processes.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from replay.tasks.sandbox import Limits, Tier, TierName, landlock_tier, run_python
from replay.tasks.sandbox.layout import NOBODY
from tests.sandbox_probes import Outcome, verdict

# The run limits of the memory probe: small enough that 13 files of one file-size limit
# each pass the memory by half.
MEMORY = Limits(cpu_seconds=20, memory_bytes=512 * 1024**2, processes=16,
                file_bytes=64 * 1024**2, tmp_bytes=64 * 1024**2, wall_seconds=60)
SYS_IOPRIO_GET = 252  # x86_64, as the probes' other raw calls
IOPRIO_WHO_PROCESS = 1

HOST_PROCESSES = r'''
import ctypes, fcntl, os, resource, signal
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NICE, IDLE, BATCH = 19, 3 << 13, 3


refused = 0  # counted, not printed: the caller keeps only the last 2000 characters


def attempt(what, call):
    global refused
    try:
        result = call()
    except OSError:
        refused += 1
        return False
    print("ESCAPED", what, result)
    return True


def raw(nr, *args):
    def call():
        value = libc.syscall(nr, *args)
        if value < 0:
            raise OSError(ctypes.get_errno(), "raw")
        return value
    return call


def exists(what, call):
    """A pid's existence leaks when the answer is anything but "no such process"."""
    global refused
    try:
        call()
        print("LEAK", what, "exists")
    except OSError as exc:
        if exc.errno != 3:
            print("LEAK", what, exc.errno)
        refused += 1


targets = list(TARGETS) + ([os.getppid()] if TIER == "landlock" else [])
for pid in targets:
    attempt(f"prlimit-fsize {pid}", lambda: resource.prlimit(pid, resource.RLIMIT_FSIZE, (0, 0)))
    attempt(f"prlimit-read {pid}", lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE))
    attempt(f"setpriority-process {pid}", lambda: os.setpriority(os.PRIO_PROCESS, pid, NICE))
    attempt(f"setpriority-pgrp {pid}", lambda: os.setpriority(os.PRIO_PGRP, pid, NICE))
    attempt(f"getpriority {pid}", lambda: os.getpriority(os.PRIO_PROCESS, pid))
    attempt(f"sched_setaffinity {pid}", lambda: os.sched_setaffinity(pid, {0}))
    attempt(f"sched_getaffinity {pid}", lambda: os.sched_getaffinity(pid))
    attempt(f"sched_setscheduler {pid}",
            lambda: os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0)))
    attempt(f"sched_setparam {pid}", lambda: os.sched_setparam(pid, os.sched_param(0)))
    attempt(f"sched_getparam {pid}", lambda: os.sched_getparam(pid))
    attempt(f"sched_getscheduler {pid}", lambda: os.sched_getscheduler(pid))
    attr = (ctypes.c_uint32 * 12)(48, BATCH, 0, 0, NICE)  # struct sched_attr, 48 bytes
    attempt(f"sched_setattr {pid}", raw(314, pid, attr, 0))
    attempt(f"sched_getattr {pid}", raw(315, pid, attr, 48, 0))
    attempt(f"ioprio_set {pid}", raw(251, 1, pid, IDLE))
    attempt(f"ioprio_get {pid}", raw(252, 1, pid))
    nodes = ctypes.c_ulong(1)
    attempt(f"migrate_pages {pid}", raw(256, pid, 64, ctypes.byref(nodes), ctypes.byref(nodes)))
    attempt(f"getpgid {pid}", lambda: os.getpgid(pid))
    attempt(f"getsid {pid}", lambda: os.getsid(pid))
    attempt(f"pidfd_open {pid}", lambda: os.close(os.pidfd_open(pid)))
    # the pid alone, as 64 bits with a stray high bit (the kernel reads 32)
    attempt(f"sched_getscheduler-high-bits {pid}", raw(145, (1 << 32) | pid))
    exists(f"kill-0 {pid}", lambda: os.kill(pid, 0))
    exists(f"kill-cont {pid}", lambda: os.kill(pid, signal.SIGCONT))
    exists(f"killpg-0 {pid}", lambda: os.killpg(pid, 0))  # each sleeper leads its group
    exists(f"tkill-0 {pid}", raw(200, pid, 0))
    exists(f"tgkill-0 {pid}", raw(234, pid, pid, 0))
    info = (ctypes.c_int * 32)(0, 0, -1)  # si_code SI_QUEUE: the kernel then looks the pid up
    exists(f"rt_sigqueueinfo {pid}", raw(129, pid, 0, info))
    exists(f"rt_tgsigqueueinfo {pid}", raw(297, pid, pid, 0, info))
    header, caps = (ctypes.c_uint32 * 2)(0x20080522, pid), (ctypes.c_uint32 * 6)()
    exists(f"capget {pid}", raw(125, header, caps))
    with open(".owner", "w") as owner:
        exists(f"f_setown {pid}", lambda: fcntl.fcntl(owner, fcntl.F_SETOWN, pid))


def inside(what, call):
    """The kernel walks only the tasks the caller's PID namespace shows: its own run's."""
    try:
        print("INSIDE", what, call())
    except OSError as exc:
        print("BLOCKED", what, exc.errno)
    return False


# every process of the uid: the write only once the read was refused (see the module)
whole_uid = attempt if TIER == "landlock" else inside
if not whole_uid("getpriority-user", lambda: os.getpriority(os.PRIO_USER, 0)):
    whole_uid("setpriority-user", lambda: os.setpriority(os.PRIO_USER, 0, NICE))
whole_uid("getpriority-user-high-bits", raw(140, (1 << 32) | 2, 0))
if not whole_uid("ioprio_get-user", raw(252, 3, 0)):
    whole_uid("ioprio_set-user", raw(251, 3, 0, (2 << 13) | 7))
seen = 0
for pid in range(1, PID_MAX):
    try:
        os.sched_getscheduler(pid)
        seen += 1
    except OSError:
        pass
print("SEEN", seen)
answered = 0  # kill(pid, 0) over the low pids and those around the targets
for pid in sorted({*range(1, 2000), *(t + d for t in targets for d in range(-50, 50))}):
    try:
        os.kill(pid, 0)
        answered += 1
    except OSError as exc:
        answered += exc.errno != 3  # ESRCH: nothing there
print("KILLSEEN", answered)
try:
    print("PROCSEEN", sum(entry.isdigit() for entry in os.listdir("/proc")))
except OSError:
    print("PROCSEEN 0")  # not readable at all
print("REFUSED", refused)
# the program's own process stays fully usable
os.setpriority(os.PRIO_PROCESS, 0, NICE)
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
os.sched_setaffinity(0, os.sched_getaffinity(0))
print("OWN", os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0), os.getpgid(0))
'''

POSIX_IPC = r'''
import ctypes, os, time, _posixshmem
libc = ctypes.CDLL(None, use_errno=True)
libc.mq_open.restype = ctypes.c_int
libc.sem_open.restype = ctypes.c_void_p
host = libc.mq_open(HOST_QUEUE.encode(), os.O_RDONLY)
print("ESCAPED found-host-queue" if host >= 0 else "BLOCKED host-queue", ctypes.get_errno())
for name in QUEUES:
    # 0o000: the open after the creation is refused, the queue would still be made
    made = libc.mq_open(name.encode(), os.O_CREAT | os.O_RDWR, 0o000, None)
    print("MADE" if made >= 0 else "BLOCKED", "mq", name, ctypes.get_errno())
try:
    fd = _posixshmem.shm_open(SHM, os.O_CREAT | os.O_RDWR, 0o600)
    os.ftruncate(fd, 4096)
    print("MADE shm", SHM)
except OSError as exc:
    print("BLOCKED shm", exc.errno)
sem = libc.sem_open(SEM.encode(), os.O_CREAT, 0o600, 1)
print("MADE" if sem else "BLOCKED", "sem", SEM, ctypes.get_errno())
time.sleep(1.0)  # held while the host looks
libc.mq_unlink(QUEUES[0].encode())  # one taken back: it must not have been the host's either
'''

MEMFD = r'''
import os
chunk, held, fds = 1 << 20, 0, []
def hold(make, what):
    global held
    try:
        fd = make()
    except OSError as exc:
        print("BLOCKED", what, exc.errno)
        return False
    try:
        for _ in range(PER_FILE):
            os.write(fd, b"x" * chunk)
            held += chunk
    except OSError as exc:
        print("STOPPED", what, exc.errno)
        return False
    fds.append(fd)
    return True
for k in range(COUNT):
    if not hold(lambda: os.memfd_create(f"hold{k}"), "memfd_create"):
        break
for place in ("/dev/shm", "/tmp"):  # memory-backed where they are writable at all
    for k in range(COUNT):
        if not hold(lambda: os.open(place, os.O_TMPFILE | os.O_RDWR, 0o600), f"tmpfile {place}"):
            break
print("HELD", held)
'''


def program_uid(tier: Tier) -> int:
    """The host uid the tier's program runs as."""
    if os.geteuid() != 0:
        return os.geteuid()
    return NOBODY if tier.name is TierName.BUBBLEWRAP else landlock_tier.program_uid()


@contextlib.contextmanager
def sleepers(uid: int, count: int = 2) -> Iterator[list[int]]:
    """Processes of `uid` outside any sandbox, each its own process group: the neighbours a
    program must not reach (as root they stand for other users' runs as nobody)."""
    kw: dict[str, object] = {"user": uid, "group": uid} if os.geteuid() == 0 else {}
    procs = [subprocess.Popen(["sleep", "120"], start_new_session=True, **kw)  # type: ignore[call-overload]
             for _ in range(count)]
    try:
        yield [p.pid for p in procs]
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def _ioprio(pid: int) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return int(libc.syscall(SYS_IOPRIO_GET, IOPRIO_WHO_PROCESS, pid))


def process_state(pid: int) -> tuple[object, ...]:
    """What a program could change of a process: file-size limit, nice, affinity, policy,
    I/O priority."""
    # /proc, not prlimit: a root without CAP_SYS_RESOURCE (a container) may not call that
    limits = Path(f"/proc/{pid}/limits").read_text().splitlines()
    fsize = next(line for line in limits if line.startswith("Max file size"))
    return (fsize, os.getpriority(os.PRIO_PROCESS, pid),
            os.sched_getaffinity(pid), os.sched_getscheduler(pid), _ioprio(pid))


def probe_host_processes(tier: Tier, limits: Limits) -> Outcome:
    """20 calls that name a process (prlimit, set/getpriority, sched_* and sched_*attr,
    ioprio_set/get, migrate_pages, getpgid, getsid, pidfd_open, a pid with a stray high bit)
    and 9 that tell whether it exists (kill with 0 and SIGCONT, killpg, tkill, tgkill,
    rt_sigqueueinfo, rt_tgsigqueueinfo, capget, F_SETOWN) on 2 sleepers of the program's uid,
    the caller and (Landlock) the supervisor; whole-uid priorities; sched_getscheduler over
    every pid, kill(pid, 0) over 2,000 and a listing of /proc. Escaped when a target changed
    or more than the run's own few pids answer; a pid shown to exist is a LEAK line."""
    with sleepers(program_uid(tier)) as pids:
        if os.geteuid() == 0:  # a value the program's NICE would change
            for pid in pids:
                os.setpriority(os.PRIO_PROCESS, pid, 10)
        watched = [*pids, os.getpid()]
        before = {pid: process_state(pid) for pid in watched}
        pid_max = int(Path("/proc/sys/kernel/pid_max").read_text())
        code = (f"TARGETS = {watched!r}\nTIER = {tier.name.value!r}\nPID_MAX = {pid_max}\n"
                f"{HOST_PROCESSES}")
        result = run_python(code, limits=limits, tier=tier)
        changed = [f"{'caller' if pid == os.getpid() else 'sleeper'} {pid} changed: "
                   f"{before[pid]} -> {now}"
                   for pid in watched if (now := process_state(pid)) != before[pid]]
    seen = [line for line in result.stdout.splitlines() if line.startswith("SEEN")]
    if not seen:
        changed.append("the program did not finish its scan")
    elif int(seen[0].split()[1]) > 4:
        changed.append(f"{seen[0]} host pids found by sched_getscheduler")
    killed = [line for line in result.stdout.splitlines() if line.startswith("KILLSEEN")]
    if killed and int(killed[0].split()[1]) > 4:
        changed.append(f"{killed[0]} host pids found by kill(pid, 0)")
    listed = [line for line in result.stdout.splitlines() if line.startswith("PROCSEEN")]
    if listed and int(listed[0].split()[1]) > 4:
        changed.append(f"{listed[0]} host pids listed in /proc")
    return verdict(result, changed)


def _queue_exists(name: str) -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.mq_open(name.encode(), os.O_RDONLY)
    if fd >= 0:
        os.close(fd)
        return True
    return ctypes.get_errno() != 2  # ENOENT; EACCES (a 0o000 queue) means it is there


def _unlink_queue(name: str) -> None:
    ctypes.CDLL(None, use_errno=True).mq_unlink(name.encode())


def probe_posix_ipc(tier: Tier, limits: Limits) -> Outcome:
    """A world-readable queue of the caller's must stay out of sight; queues, a shared memory
    object and a named semaphore the program makes must be seen on the host neither while
    it runs nor after."""
    tag = f"stratune-{os.getpid()}-{time.monotonic_ns() & 0xFFFFFF}"
    host_queue, queues = f"/{tag}-host", [f"/{tag}-q{k}" for k in range(3)]
    shm, sem = f"/{tag}-shm", f"/{tag}-sem"
    files = [Path("/dev/shm") / shm[1:], Path("/dev/shm") / f"sem.{sem[1:]}"]
    libc = ctypes.CDLL(None, use_errno=True)
    old = os.umask(0)
    try:
        fd = libc.mq_open(host_queue.encode(), os.O_CREAT | os.O_RDONLY, 0o666, None)
    finally:
        os.umask(old)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "mq_open for the probe's own queue")
    os.close(fd)
    seen: set[str] = set()
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            seen.update(q for q in queues if _queue_exists(q))
            seen.update(str(f) for f in files if f.exists())
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        code = (f"HOST_QUEUE = {host_queue!r}\nQUEUES = {queues!r}\nSHM = {shm!r}\n"
                f"SEM = {sem!r}\n{POSIX_IPC}")
        result = run_python(code, limits=limits, tier=tier)
    finally:
        stop.set()
        watcher.join()
        left = [q for q in queues if _queue_exists(q)] + [str(f) for f in files if f.exists()]
        for name in (host_queue, *queues):
            _unlink_queue(name)
        for path in files:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    escapes = [f"{name} seen on the host during the run" for name in sorted(seen)]
    escapes += [f"{name} left on the host" for name in left]
    return verdict(result, escapes)


def probe_memfd(tier: Tier, limits: Limits) -> Outcome:
    """Memory-backed files held open (memfds, then unnamed files in /dev/shm and /tmp), as
    many as it takes to pass the run's memory limit one and a half times: escaped when the
    run ends ok holding more than its limit."""
    per_file = limits.file_bytes >> 20
    count = (limits.memory_bytes * 3 // 2) // limits.file_bytes + 1
    result = run_python(f"PER_FILE = {per_file}\nCOUNT = {count}\n{MEMFD}", limits=limits,
                        tier=tier)
    escapes = []
    for line in result.stdout.splitlines():
        if line.startswith("HELD") and int(line.split()[1]) > limits.memory_bytes and result.ok:
            escapes.append(f"{line} bytes held past the {limits.memory_bytes >> 20} MiB limit")
    return verdict(result, escapes)
