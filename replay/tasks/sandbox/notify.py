"""The Landlock supervisor's answers to the calls the seccomp filter hands it (user notification).

Without a PID namespace a program shares the host's process table, and two things about it
cannot be decided by a BPF filter, which sees only numbers:

* Signals. Landlock keeps a signal from reaching a process outside the run, but `kill(pid, 0)`
  (and any signal) still answers "not permitted" for a pid that exists and "no such process"
  for one that does not. The supervisor lets a signal call through only when its target is a
  process, thread or process group of the run; any other pid gets ESRCH, as if it did not exist.
* `capget`. Its pid sits in a header behind a pointer, out of the filter's sight, and it
  answers for any pid. The supervisor reads the header from the caller's memory and answers
  itself (from /proc/PID/status), for the run's own processes only; letting the call through
  after the check would let another thread of the caller swap the pid in between.
* Process counts. RLIMIT_NPROC counts every task of the uid, the caller's threads included,
  so a limit fixed at the start is either loose or breaks when the caller starts threads. Before
  each clone/fork the supervisor sets the caller's soft limit to the uid's tasks outside the
  run plus the run's share, counted that moment: the kernel then refuses the task past the
  run's own share, whatever else the user runs.

Standard library only: `supervisor.py` imports it by path (it runs as `python -I`).
"""

import contextlib
import ctypes
import errno
import fcntl
import os
import resource
import struct

SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_NEW_LISTENER = 1 << 3
SECCOMP_USER_NOTIF_FLAG_CONTINUE = 1
NOTIF_RECV, NOTIF_SEND = 0xC0502100, 0xC0182101  # _IOWR('!', 0|1, struct)
SYS_SECCOMP = 317  # x86_64; the tier's other raw numbers come resolved from the parent


class Data(ctypes.Structure):
    _fields_ = [("nr", ctypes.c_int), ("arch", ctypes.c_uint32), ("ip", ctypes.c_uint64),
                ("args", ctypes.c_uint64 * 6)]


class Notif(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint64), ("pid", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("data", Data)]


class Resp(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint64), ("val", ctypes.c_int64), ("error", ctypes.c_int32),
                ("flags", ctypes.c_uint32)]


def load_with_listener(program: bytes, syscall_nr: int = SYS_SECCOMP) -> int:
    """Install a compiled filter (no_new_privs already set) and return its listener fd."""

    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    prog = Fprog(len(program) // 8, program)
    fd = libc.syscall(syscall_nr, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
                      ctypes.byref(prog))
    if fd < 0:
        raise OSError(ctypes.get_errno(), "seccomp(SET_MODE_FILTER, NEW_LISTENER)")
    return int(fd)


def _status(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/status") as fh:
        return dict(line.rstrip("\n").split(":\t", 1) for line in fh if ":\t" in line)


def _pgrp(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as fh:
        stat = fh.read()
    return int(stat[stat.rindex(b")") + 2:].split()[2])


def scan() -> list[tuple[int, int, int, int]]:
    """(pid, parent pid, real uid, threads) of every process now."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = _status(int(entry))
            found.append((int(entry), int(fields["PPid"]), int(fields["Uid"].split()[0]),
                          int(fields["Threads"])))
        except (OSError, KeyError, ValueError):
            continue  # gone meanwhile
    return found


def run_members(me: int, table: list[tuple[int, int, int, int]]) -> set[int]:
    """The supervisor and its descendants (orphans of the run come back to it: subreaper)."""
    children: dict[int, list[int]] = {}
    for pid, ppid, _uid, _threads in table:
        children.setdefault(ppid, []).append(pid)
    members, stack = {me}, [me]
    while stack:
        for kid in children.get(stack.pop(), ()):
            if kid not in members:
                members.add(kid)
                stack.append(kid)
    return members


def _descends(pid: int, me: int) -> bool:
    """`pid` (a process or thread id) is below the supervisor: a walk up its parents, so a
    scan of every pid costs one failed open per missing pid, not a /proc listing."""
    fields = _status(pid)
    pid = int(fields["Tgid"])  # a thread id names its process
    while pid > 1:
        pid = int(_status(pid)["PPid"])
        if pid == me:
            return True
    return False


def signal_allowed(target: int, me: int) -> bool:
    """A signal call's first argument names a process (or, negated, a group) of the run."""
    if target in (0, -1):  # the caller's own group; every process the caller may signal
        return True
    try:
        if target > 0:
            return _descends(target, me)
        members = run_members(me, scan()) - {me}
        return any(_pgrp(pid) == -target for pid in members)
    except (OSError, KeyError, ValueError):
        return False


def nproc_limit(me: int, uid: int, share: int) -> int:
    """The uid's tasks outside the run, plus the run's share (its supervisor included)."""
    table = scan()
    members = run_members(me, table)
    return share + sum(threads for pid, _ppid, owner, threads in table
                       if owner == uid and pid not in members)


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


CAP_VERSIONS = {0x19980330: 1, 0x20071026: 2, 0x20080522: 2}  # version -> u32 words per set
CAP_PREFERRED = 0x20080522


def _caps(pid: int) -> tuple[int, int, int]:
    fields = _status(pid)
    return tuple(int(fields[k], 16) for k in ("CapEff", "CapPrm", "CapInh"))  # type: ignore[return-value]


def answer_capget(tid: int, header: int, data: int, me: int) -> int:
    """capget for the calling thread `tid`, as the kernel would answer it; the errno (0: done)."""
    try:
        with open(f"/proc/{tid}/mem", "r+b", buffering=0) as mem:
            mem.seek(header)
            version, pid = struct.unpack("Ii", mem.read(8))
            if version not in CAP_VERSIONS:  # the kernel tells the caller its own version
                mem.seek(header)
                mem.write(struct.pack("I", CAP_PREFERRED))
                return 0 if data == 0 else errno.EINVAL
            if pid < 0:
                return errno.EINVAL
            if pid != 0 and not signal_allowed(pid, me):  # the same test: a run process
                return errno.ESRCH
            words = CAP_VERSIONS[version]
            sets = _caps(pid or tid)
            out = b"".join(struct.pack("III", *((v >> (32 * w)) & 0xFFFFFFFF for v in sets))
                           for w in range(words))
            if data == 0:
                return errno.EFAULT
            mem.seek(data)
            mem.write(out)
            return 0
    except (OSError, KeyError, ValueError, struct.error):
        return errno.EPERM


class Listener:
    """Answers one run's notifications; `kinds` maps syscall numbers to 'signal' or 'clone'."""

    def __init__(self, fd: int, kinds: dict[int, str], *, uid: int, share: int | None) -> None:
        self.fd, self.kinds, self.uid, self.share = fd, kinds, uid, share
        self.me = os.getpid()

    def handle(self) -> None:
        """Answer one pending notification (the listener fd was readable)."""
        notif = Notif()
        try:
            fcntl.ioctl(self.fd, NOTIF_RECV, notif)
        except OSError:
            return  # the caller died before we looked
        allowed = True
        kind = self.kinds.get(notif.data.nr)
        if kind == "capget":
            code = answer_capget(notif.pid, notif.data.args[0], notif.data.args[1], self.me)
            self._send(Resp(id=notif.id, val=0 if code == 0 else -1, error=-code, flags=0))
            return
        if kind == "signal":
            allowed = signal_allowed(_int32(notif.data.args[0]), self.me)
        elif kind == "clone" and self.share is not None:  # None: a cgroup counts the run
            limit = nproc_limit(self.me, self.uid, self.share)
            # the soft limit only: the hard one stays what the program started with; a
            # caller gone meanwhile needs none
            with contextlib.suppress(OSError):
                hard = resource.prlimit(notif.pid, resource.RLIMIT_NPROC)[1]
                resource.prlimit(notif.pid, resource.RLIMIT_NPROC, (min(limit, hard), hard))
        self._send(Resp(id=notif.id, val=0, error=0 if allowed else -errno.ESRCH,
                        flags=SECCOMP_USER_NOTIF_FLAG_CONTINUE if allowed else 0))

    def _send(self, resp: Resp) -> None:
        with contextlib.suppress(OSError):  # the caller died or was interrupted meanwhile
            fcntl.ioctl(self.fd, NOTIF_SEND, resp)
