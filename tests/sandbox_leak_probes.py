"""Hostile programs that learn about the host or hold its files without writing anything:
pid enumeration (socket owners, /proc entries), locks on host files the program can read,
and inotify/fanotify instances. Shared by `test_sandbox_hostile_leaks.py` and
`benchmarks/sandbox_probes.py`; same conventions as `sandbox_probes.py`.

A pid probe compares the answers for host pids known to exist (the caller and its parent; not
pid 1, which a PID namespace has too) with those for pids known to be free: it escaped when they differ, since then the program
can tell which host pids exist.
"""

from __future__ import annotations

import fcntl
import os
import struct
import sys
import threading
import time
from pathlib import Path

import attrs

from replay.tasks.sandbox import Limits, Tier, run_python
from tests.sandbox_probes import Outcome, verdict

FIOSETOWN, SIOCSPGRP = 0x8901, 0x8902

SOCKET_OWNER = r'''
import errno, fcntl, os, socket, struct
left, right = socket.socketpair()
read_end, write_end = os.pipe()
answers = {}
for what, fd in (("socketpair", left.fileno()), ("pipe", read_end)):
    for name, request in (("FIOSETOWN", 0x8901), ("SIOCSPGRP", 0x8902)):
        for kind, pids in (("live", LIVE), ("free", FREE)):
            for pid in pids:
                try:
                    fcntl.ioctl(fd, request, struct.pack("i", pid))
                    got = 0
                except OSError as exc:
                    got = exc.errno
                answers.setdefault((what, name, kind), set()).add(got)
for (what, name, kind), got in sorted(answers.items()):
    if kind == "live" and got != answers[(what, name, "free")]:
        print("ESCAPED", name, what, "tells live pids from free ones")
    elif kind == "live":
        print("BLOCKED", name, what, sorted(got))
'''

PROC_PIDS = r'''
import os
seen = {}
for kind, pids in (("live", LIVE), ("free", FREE)):
    for pid in pids:
        try:
            os.stat(f"/proc/{pid}")
            seen.setdefault(kind, set()).add(True)
        except OSError:
            seen.setdefault(kind, set()).add(False)
if seen["live"] != seen["free"]:
    print("ESCAPED /proc/PID tells live host pids from free ones")
else:
    print("BLOCKED /proc/PID")
'''

FILE_LOCKS = r'''
import fcntl, os, struct, time
F_OFD_SETLK = 37
held = []
for path in TARGETS:
    for what in ("flock", "F_SETLK", "F_OFD_SETLK"):
        try:
            fd = os.open(path, os.O_RDONLY)
            if what == "flock":
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            else:  # a read lock: all a read-only descriptor may take, and it stops writers
                cmd = fcntl.F_SETLK if what == "F_SETLK" else F_OFD_SETLK
                fcntl.fcntl(fd, cmd, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 0, 0))
            held.append(fd)
            print("CALLED", what, path)  # the host checks whether a lock is there
        except OSError as exc:
            print("BLOCKED", what, exc.errno)
time.sleep(HOLD)
'''

NOTIFY_INSTANCES = r'''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
made = 0
for _ in range(200):  # past the default 128 instances of a uid
    if libc.inotify_init1(0o2000000) < 0:  # IN_CLOEXEC
        break
    made += 1
print("ESCAPED" if made else "BLOCKED", "inotify instances", made, ctypes.get_errno())
if made:
    fd = libc.inotify_init1(0)
    watch = libc.inotify_add_watch(fd, WATCHED.encode(), 0x100)  # IN_CREATE
    print("ESCAPED" if watch >= 0 else "BLOCKED", "inotify watch on a host directory")
for flags in (0, 0x200):  # FAN_CLASS_NOTIF; FAN_REPORT_FID (what a user may ask for)
    fd = libc.fanotify_init(flags, 0)
    print("ESCAPED" if fd >= 0 else "BLOCKED", "fanotify", flags, ctypes.get_errno())
'''


def _live_and_free() -> tuple[list[int], list[int]]:
    """Host pids that exist (this process, its parent) and pids no process holds."""
    live = [os.getpid(), os.getppid()]
    top = int(Path("/proc/sys/kernel/pid_max").read_text())
    free = [p for p in range(top - 1, top - 400, -1) if not os.path.exists(f"/proc/{p}")][:3]
    return live, free


def probe_socket_owner(tier: Tier, limits: Limits) -> Outcome:
    """ioctl FIOSETOWN and SIOCSPGRP on a socketpair and a pipe, naming host pids that exist
    (the caller, its parent) and free ones: escaped when the answers differ."""
    live, free = _live_and_free()
    return verdict(run_python(f"LIVE = {live!r}\nFREE = {free!r}\n{SOCKET_OWNER}",
                              limits=limits, tier=tier))


def probe_proc_pids(tier: Tier, limits: Limits) -> Outcome:
    """stat('/proc/PID') for host pids that exist (the caller, its parent) and free ones: escaped when the answers differ."""
    live, free = _live_and_free()
    return verdict(run_python(f"LIVE = {live!r}\nFREE = {free!r}\n{PROC_PIDS}",
                              limits=limits, tier=tier))


def lock_targets() -> list[Path]:
    """Host files every tier lets the program read: the interpreter and a file of the venv."""
    return [Path(os.path.realpath(sys.executable)), Path(attrs.__file__)]


def _locked(path: Path) -> list[str]:
    """What of `path` a host locker finds taken: an exclusive flock, a POSIX write lock."""
    found = []
    fd = os.open(path, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
        except BlockingIOError:
            found.append(f"flock held on {path}")
        query = struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0)
        for name, cmd in (("F_GETLK", fcntl.F_GETLK), ("F_OFD_GETLK", 36)):
            kind = struct.unpack("hhqqi", fcntl.fcntl(fd, cmd, query))[0]
            if kind != fcntl.F_UNLCK:
                found.append(f"{name} finds a lock on {path}")
    finally:
        os.close(fd)
    return found


def probe_file_locks(tier: Tier, limits: Limits) -> Outcome:
    """flock, F_SETLK and F_OFD_SETLK on the interpreter and a file of the venv, held 1.5 s
    while the host checks for them: escaped when a host locker would find any taken."""
    targets = lock_targets()
    found: set[str] = set()
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            for path in targets:
                found.update(_locked(path))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        code = f"TARGETS = {[str(p) for p in targets]!r}\nHOLD = 1.5\n{FILE_LOCKS}"
        result = run_python(code, limits=limits, tier=tier)
    finally:
        stop.set()
        watcher.join()
    return verdict(result, sorted(found))


def probe_notify_instances(tier: Tier, limits: Limits) -> Outcome:
    """200 inotify instances (the uid's default limit is 128), a watch on the interpreter's
    directory, fanotify_init: escaped when any instance is made."""
    watched = os.path.dirname(os.path.realpath(sys.executable))
    return verdict(run_python(f"WATCHED = {watched!r}\n{NOTIFY_INSTANCES}", limits=limits,
                              tier=tier))
