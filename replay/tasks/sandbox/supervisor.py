"""The Landlock tier's supervisor: `python -I supervisor.py CONFIG.json` (not imported).

It stays outside the confinement, forks the program, and confines the child before exec:
its own session, rlimits, a Landlock ruleset (read the system and the interpreter, write only
the work directory, no TCP, no signals or abstract sockets outside the run), the seccomp
filter of `syscalls.py`, compiled by the parent (no new sockets, no file metadata changes, no SysV IPC, no namespaces,
no ptrace, ...), and, when started as root, no capabilities (setpriv: empty bounding set,
`noroot` securebits) and the uid `nobody` where nobody can reach the interpreter.
As a child subreaper it inherits every orphan of the run, so when the program ends or its
wall time runs out it kills all descendants, reaps them, and writes the outcome.
"""

import contextlib
import json
import os
import resource
import select
import signal
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # `-I` leaves it out
import notify  # noqa: E402 - needs the path above

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
SETPRIV = ("/usr/bin/setpriv", "--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all",
           "--securebits=+noroot,+noroot_locked,+no_setuid_fixup,+no_setuid_fixup_locked,"
           "+keep_caps_locked")


def _prctl(option: int, value: int) -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option})")


CLONE_NEWNS = 0x20000
MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x1000, 0x4000, 0x40000


def _uncover(closed: dict[str, list[str]]) -> None:
    """Root about to become nobody: in a private mount namespace, lay an empty 0755 tmpfs
    over each closed directory above the interpreter (a 0700 /root) and bind only the
    interpreter back, so nobody can run it and sees nothing else of that directory."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def check(status: int, what: str) -> None:
        if status != 0:
            raise OSError(ctypes.get_errno(), what)

    check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "make / private")
    for top, keep in closed.items():
        fds = [os.open(path, os.O_PATH | os.O_DIRECTORY) for path in keep]
        check(libc.mount(b"tmpfs", top.encode(), b"tmpfs", MS_NOSUID | MS_NODEV,
                         b"mode=0755,size=1m"), f"tmpfs over {top}")
        for path, fd in zip(keep, fds, strict=True):
            os.makedirs(path, mode=0o755, exist_ok=True)
            check(libc.mount(f"/proc/self/fd/{fd}".encode(), path.encode(), None,
                             MS_BIND | MS_REC, None), f"bind {path}")
            os.close(fd)


def _confine(cfg: dict, seccomp: bytes, channel: socket.socket) -> None:
    from py_landlock import AccessFs, Landlock

    for which, value in cfg["rlimits"]:
        # The supervisor moves RLIMIT_NPROC's soft limit with the uid's count (notify.py);
        # the program itself may not (the filter refuses it)
        hard = resource.getrlimit(which)[1] if which == resource.RLIMIT_NPROC else value
        resource.setrlimit(which, (value, hard))
    rules = Landlock(strict=True)
    rules.allow_read(*cfg["read_dirs"]).allow_execute(*cfg["exec_dirs"])
    rules.add_path_rule(*cfg["read_files"], access=AccessFs.READ_FILE)
    rules.add_path_rule(*cfg["devices"], access=AccessFs.READ_FILE | AccessFs.WRITE_FILE)
    rules.allow_read(cfg["prog"])
    rules.allow_read_write(cfg["work"])
    rules.apply()  # also sets no_new_privs
    listener = notify.load_with_listener(seccomp, cfg["seccomp_nr"])
    socket.send_fds(channel, [b"L"], [listener])
    os.close(listener)
    channel.close()


def _child(cfg: dict, seccomp: bytes, channel: socket.socket) -> None:
    try:
        os.setsid()
        if cfg["uncover"]:
            _uncover(cfg["uncover"])
        os.chdir(cfg["work"])
        _confine(cfg, seccomp, channel)
        argv = list(cfg["argv"])
        if os.geteuid() == 0:
            uid = cfg["uid"]
            who = [f"--reuid={uid}", f"--regid={uid}", "--clear-groups"] if uid else []
            argv = [*SETPRIV, *who, "--", *argv]
        os.execve(argv[0], argv, cfg["env"])
    except BaseException as exc:  # noqa: BLE001 - report anything, then never run unconfined
        os.write(2, f"sandbox setup failed: {exc!r}\n".encode())
    os._exit(125)


def _children(me: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # Fields after the parenthesised command name: state, ppid, ...
        if int(stat[stat.rindex(b")") + 2:].split()[1]) == me:
            found.append(int(entry))
    return found


def _kill_all(me: int) -> None:
    """Kill children until none are left; orphans of killed ones come to us (subreaper)."""
    while True:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                pid = 0
            if pid == 0:
                break
        kids = _children(me)
        if not kids:
            return
        for pid in kids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)


def main() -> None:
    with open(sys.argv[1]) as fh:
        cfg = json.load(fh)
    # Load the binding (it looks for libc with helper processes) and the filter before the
    # child exists, so its process limit and Landlock rules cannot get in their way.
    import py_landlock

    py_landlock.get_abi_version()  # loads libc now
    with open(cfg["seccomp"], "rb") as fh:
        seccomp = fh.read()
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != cfg["parent"]:
        sys.exit(125)  # the parent is already gone: run nothing
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        ours.close()
        _child(cfg, seccomp, theirs)
    theirs.close()
    pidfd = os.pidfd_open(pid)
    _, fds, _, _ = socket.recv_fds(ours, 1, 1)  # nothing when the child's setup failed
    ours.close()
    kinds = {int(nr): kind for nr, kind in cfg["notify"].items()}
    listener = notify.Listener(fds[0], kinds, uid=cfg["nproc_uid"], share=cfg["share"]) \
        if fds else None
    watched = [pidfd] if listener is None else [pidfd, listener.fd]
    deadline = time.monotonic() + cfg["wall_seconds"]
    status = None
    while not stop:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            ready, _, _ = select.select(watched, [], [], min(left, 0.5))
        except InterruptedError:
            continue
        if listener is not None and listener.fd in ready:
            listener.handle()
        if pidfd in ready:
            _, status = os.waitpid(pid, 0)
            break
    me = os.getpid()
    _kill_all(me)
    if listener is not None:
        os.close(listener.fd)
    code = None if status is None else os.waitstatus_to_exitcode(status)
    with open(cfg["result"], "w") as fh:
        json.dump({"exit_code": code, "timed_out": status is None and not stop}, fh)


if __name__ == "__main__":
    main()
