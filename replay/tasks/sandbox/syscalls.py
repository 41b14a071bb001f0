"""The seccomp filter both tiers load: kernel interfaces a spreadsheet program never needs.

One list, compiled once per process to BPF: the bubblewrap tier hands it to bwrap
(`--seccomp FD`), the Landlock supervisor loads it before exec. Everything not named
here is allowed. Where an honest program could meet a refusal through the standard library,
the errno is one it already handles: `fallocate` says "not supported" (glibc's
posix_fallocate then writes the blocks, which the file-size limit bounds), extended
attributes say "not supported" (shutil's copy2 skips them), and mode and time changes are
dropped as if done (shutil.copy sets the copy's mode; Landlock cannot refuse these, and under
it the uid may own files far outside the run).

Without a PID namespace (the Landlock tier) the program shares the host's process table with
every other process of its uid, so each call that names a process, a process group or a user
is allowed on the caller itself only: pid (or who) 0, never a number or a whole uid. The
kernel reads these arguments as 32-bit ints while seccomp sees 64 bits, so "is 0" is tested on
all 64 (any stray bit refuses) and "which" is masked to its 32.
"""

from __future__ import annotations

import errno
import functools
import os

from attrs import frozen

CLONE_NAMESPACES = (0x00000080, 0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000,
                    0x20000000, 0x40000000)  # NEWTIME NS CGROUP UTS IPC USER PID NET
ENOSYS_FOR_CLONE3 = "clone3"  # its flags sit behind a pointer; libc falls back to clone


O_PATH = 0o10000000


INT_BITS = 0xFFFFFFFF
PRIO_USER = 2  # setpriority/getpriority: every process of a uid
IOPRIO_WHO_USER = 3  # ioprio_set/ioprio_get: the same


@frozen
class Rule:
    name: str
    errno: int
    mask: int = 0  # with a mask: only when (argument `arg` & mask) == `value` (default: mask)
    arg: int = 0
    nonzero: bool = False  # instead: only when argument `arg` is not 0
    value: int | None = None
    notify: bool = False  # ask the Landlock supervisor (notify.py) instead of failing


_EVERYWHERE = (
    # debugging and other processes' memory: a stalled or spied-on run
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    # kernel keyrings, BPF, perf, io_uring, userfaultfd: large attack surface, no use here
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    # mounts and namespaces
    "mount", "umount2", "pivot_root", "unshare", "setns", "fsopen", "fsmount", "fsconfig",
    "move_mount", "open_tree", "mount_setattr",
    # file handles identify files outside the visible tree (and their inode)
    "name_to_handle_at", "open_by_handle_at",
    # System V IPC is shared with the host where there is no IPC namespace
    "shmget", "msgget", "semget",
    # the system
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog", "settimeofday",
    "clock_settime", "adjtimex", "clock_adjtime", "sethostname", "setdomainname",
)
# Memory outside RLIMIT_AS: a memfd's pages count against no rlimit, so without a cgroup a
# program could hold many times its memory in them (openpyxl never needs one)
_UNACCOUNTED_MEMORY = ("memfd_create", "memfd_secret")
# Calls whose first argument names a process, 0 meaning the caller (pidfd_open takes no 0:
# refused outright; asyncio then watches children with a thread, as on kernels before 5.3)
_OWN_PROCESS_ONLY = ("prlimit64", "sched_setaffinity", "sched_getaffinity", "sched_setscheduler",
                     "sched_getscheduler", "sched_setparam", "sched_getparam", "sched_setattr",
                     "sched_getattr", "sched_rr_get_interval", "migrate_pages", "move_pages",
                     "get_robust_list", "getpgid", "getsid")
# Calls that answer "does this pid exist" even when Landlock keeps the signal from arriving:
# the supervisor lets them through for the run's own processes only (notify.py)
_SIGNALS = ("tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")
# New tasks: the supervisor sets the caller's RLIMIT_NPROC from the uid's count that moment
_NEW_TASKS = ("fork", "vfork")
RLIMIT_NPROC = 6
F_SETOWN, F_SETOWN_EX = 8, 15  # naming a missing pid answers ESRCH
# The same through ioctl on a socket (a socketpair works under either tier): the kernel's
# answer tells a live pid from a free one, with or without a PID namespace's view of it
FIOSETOWN, SIOCSPGRP = 0x8901, 0x8902
# Locks on a file the program may only read (the interpreter, the venv) still stop every host
# process that locks it, for the whole run: answered as taken, with no lock made
F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW = 6, 7, 37, 38
# One inotify instance counts against the uid's host-wide limit (128) and its watches report
# names the host creates in directories the program may read; fanotify sees more
_FILE_WATCHES = ("inotify_init", "inotify_init1", "fanotify_init")
PR_SET_DUMPABLE = 4  # an undumpable process hides its open files from the run's watcher
# (call, its "which" value that means every process of a uid)
_WHICH_WHO = (("setpriority", PRIO_USER), ("getpriority", PRIO_USER),
              ("ioprio_set", IOPRIO_WHO_USER), ("ioprio_get", IOPRIO_WHO_USER))
# POSIX message queues live in the IPC namespace's mqueue file system, which Landlock does not
# cover: a queue made there is the host's and outlives the run
_POSIX_QUEUES = ("mq_open", "mq_unlink")
_METADATA_DROPPED = ("chmod", "fchmod", "fchmodat", "fchmodat2", "utime", "utimes",
                     "utimensat", "futimesat")
_METADATA_REFUSED = ("chown", "fchown", "lchown", "fchownat")
_XATTR = ("setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr",
          "fremovexattr", "setxattrat", "removexattrat")


def rules(*, landlock: bool) -> tuple[Rule, ...]:
    """The filter for one tier. Landlock alone adds sockets (bubblewrap has no network
    namespace to leave) and file metadata (bubblewrap's program owns only its own files)."""
    out = [Rule(name, errno.EPERM) for name in _EVERYWHERE]
    out += [Rule("clone", errno.EPERM, flag) for flag in CLONE_NAMESPACES]
    out.append(Rule(ENOSYS_FOR_CLONE3, errno.ENOSYS))
    out.append(Rule("fallocate", errno.EOPNOTSUPP))
    # ENOSYS: what libraries that try a memfd first (libffi) take as "use a file instead"
    out += [Rule(name, errno.ENOSYS) for name in _UNACCOUNTED_MEMORY]
    out.append(Rule("prctl", errno.EPERM, INT_BITS, 0, value=PR_SET_DUMPABLE))
    out += [Rule("ioctl", errno.ESRCH, INT_BITS, 1, value=req) for req in (FIOSETOWN, SIOCSPGRP)]
    out.append(Rule("flock", 0))
    out += [Rule("fcntl", 0, INT_BITS, 1, value=cmd)
            for cmd in (F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW)]
    # ENOSYS: what watchers (watchdog, inotify_simple users) take as "poll instead"
    out += [Rule(name, errno.ENOSYS) for name in _FILE_WATCHES]
    if landlock:
        out.append(Rule("socket", errno.EACCES))
        out += [Rule(name, errno.EPERM, nonzero=True) for name in _OWN_PROCESS_ONLY]
        for name, every in _WHICH_WHO:
            out += [Rule(name, errno.EPERM, arg=1, nonzero=True),
                    Rule(name, errno.EPERM, INT_BITS, 0, value=every)]
        out.append(Rule("pidfd_open", errno.ENOSYS))
        out.append(Rule("kill", 0, arg=0, nonzero=True, notify=True))
        out += [Rule(name, 0, notify=True) for name in (*_SIGNALS, *_NEW_TASKS, "capget")]
        out.append(Rule("clone", 0, sum(CLONE_NAMESPACES), value=0, notify=True))
        # the soft process limit the supervisor sets must stay where it put it
        out += [Rule("setrlimit", errno.EPERM, INT_BITS, 0, value=RLIMIT_NPROC),
                Rule("prlimit64", errno.EPERM, INT_BITS, 1, value=RLIMIT_NPROC)]
        # ESRCH, the answer for a pid that is not there, whichever pid it names
        out += [Rule("fcntl", errno.ESRCH, INT_BITS, 1, value=cmd) for cmd in (F_SETOWN, F_SETOWN_EX)]
        out += [Rule(name, errno.EACCES) for name in _POSIX_QUEUES]
        out += [Rule(name, 0) for name in _METADATA_DROPPED]
        out += [Rule(name, errno.EPERM) for name in _METADATA_REFUSED]
        out += [Rule(name, errno.EOPNOTSUPP) for name in _XATTR]
        # O_PATH opens (and fstat on them) reach files Landlock's read rules do not cover;
        # openat2 hides its flags behind a pointer, and libc never needs it
        out += [Rule("open", errno.EACCES, O_PATH, 1), Rule("openat", errno.EACCES, O_PATH, 2),
                Rule("openat2", errno.ENOSYS)]
    return tuple(out)


def as_config(found: tuple[Rule, ...]) -> list[list[int | str]]:
    """The rules as plain rows for `build`."""
    return [[r.name, r.errno, r.mask, r.arg, int(r.nonzero),
             r.mask if r.value is None else r.value, int(r.notify)] for r in found]


NOTIFIED_KINDS = (("kill", "signal"), *((n, "signal") for n in _SIGNALS),
                  ("clone", "clone"), *((n, "clone") for n in _NEW_TASKS),
                  ("capget", "capget"))


def number(name: str) -> int:
    """A call's number on this machine, -1 where it has none."""
    import pyseccomp

    return int(pyseccomp.resolve_syscall(pyseccomp.system_arch(), name))


def notified_numbers() -> dict[int, str]:
    """This machine's numbers of the calls the supervisor answers, with their kind."""
    numbers = {number(name): kind for name, kind in NOTIFIED_KINDS}
    numbers.pop(-1, None)
    return numbers


def build(config: list[list[int | str]]):  # noqa: ANN201 - a pyseccomp.SyscallFilter
    """The filter for `config` rows; names this libseccomp does not know are skipped (the
    kernel it was built for lacks them too)."""
    import pyseccomp

    arch = pyseccomp.system_arch()
    rule = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    for name, code, mask, arg, nonzero, value, notify in config:
        if pyseccomp.resolve_syscall(arch, str(name)) == -1:
            continue
        if nonzero:
            args = [pyseccomp.Arg(int(arg), pyseccomp.NE, 0)]
        elif mask:
            args = [pyseccomp.Arg(int(arg), pyseccomp.MASKED_EQ, int(mask), int(value))]
        else:
            args = []
        action = pyseccomp.NOTIFY if notify else pyseccomp.ERRNO(int(code))
        rule.add_rule(action, str(name), *args)
    return rule


@functools.cache
def compiled(*, landlock: bool) -> bytes:
    """A tier's filter as a BPF program (`bwrap --seccomp FD`; the Landlock supervisor loads
    it with prctl), compiled once per process."""
    fd = os.memfd_create("stratune-seccomp", os.MFD_CLOEXEC)
    try:
        with os.fdopen(fd, "w+b", closefd=False) as sink:
            build(as_config(rules(landlock=landlock))).export_bpf(sink)
        return os.pread(fd, 1 << 20, 0)
    finally:
        os.close(fd)
