"""A run's work directory: where it lives, who owns it, and what bounds its size.

As root the program runs as `nobody` (bubblewrap always, Landlock where nobody can run the
interpreter), so the work directory becomes its and the run directory is left traversable
(not listable) for it. As root the work directory
is also a tmpfs of its own, mounted with the run's size and file limits: the kernel refuses
the byte or file past them, whatever the program writes or reserves. Without root nothing
can be mounted on the host; there the file-size rlimit bounds each file, fallocate is
refused by the seccomp filter, and the run's watcher stops a run whose directory, with the
files its processes unlinked but still hold open or mapped, grows past its limits.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import stat
import time
from pathlib import Path

from replay.tasks.sandbox.layout import RunDir
from replay.tasks.sandbox.limits import Limits

MNT_DETACH = 2
MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x2, 0x4, 0x8
_INODE_SLACK = 8  # the directory itself, TMPDIR, the inputs
_can_mount = [True]  # cleared once the kernel refuses: no retry per run


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def privileged() -> bool:
    return os.geteuid() == 0


def mount_work(run: RunDir, limits: Limits, uid: int) -> bool:
    """Make `run.work` a tmpfs of the run's size and file count, owned by `uid` (root only).
    False where mounts are refused (a container without CAP_SYS_ADMIN): the work directory
    then stays a plain one, watched like a user's."""
    if not _can_mount[0]:
        return False
    options = (f"size={limits.work_bytes},nr_inodes={limits.work_files + _INODE_SLACK},"
               f"mode=0700,uid={uid},gid={uid}").encode()
    flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
    if _libc().mount(b"tmpfs", str(run.work).encode(), b"tmpfs", flags, options) == 0:
        return True
    if ctypes.get_errno() in (errno.EPERM, errno.EACCES):
        _can_mount[0] = False
        return False
    err = ctypes.get_errno()
    raise OSError(err, f"cannot mount the run's work directory: {os.strerror(err)}")


def unmount_work(run: RunDir) -> None:
    """Detach the work tmpfs (its files vanish with it); a no-op where none was mounted."""
    _libc().umount2(str(run.work).encode(), MNT_DETACH)


def hand_over(run: RunDir, uid: int) -> None:
    """As root: give the work directory's contents to `uid`, let it reach `prog` and `work`
    through the run directory (no listing), keep the rest root's."""
    os.chmod(run.base, 0o711)
    for root, dirs, files in os.walk(run.work):
        for name in (*dirs, *files):
            os.chown(os.path.join(root, name), uid, uid, follow_symlinks=False)
    os.chown(run.work, uid, uid)


def full(work: Path) -> str:
    """Why a kernel-bounded work directory refused more, '' while it has room."""
    try:
        vfs = os.statvfs(work)
    except OSError:
        return ""
    if vfs.f_blocks and vfs.f_bavail == 0:
        return f"work directory full ({vfs.f_blocks * vfs.f_frsize >> 20} MiB)"
    if vfs.f_files and vfs.f_favail == 0:
        return f"work directory holds its limit of {vfs.f_files - _INODE_SLACK} files"
    return ""


_LOOKS = 20  # a process is unreadable for a moment while it exits; not for 20 looks


def _open_files(pid: int) -> tuple[list[str], list[str]]:
    """A process's fd numbers and memory map lines; PermissionError when it stays closed."""
    for look in range(_LOOKS):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            with open(f"/proc/{pid}/maps") as fh:
                return fds, fh.read().splitlines()
        except PermissionError:
            # a process past its exit has let go of its memory and files, and its /proc
            # entry is root's from then on
            with open(f"/proc/{pid}/stat", "rb") as fh:
                stat_line = fh.read()
            if stat_line[stat_line.rindex(b")") + 2:][:1] in (b"Z", b"X"):
                return [], []
            if look == _LOOKS - 1:
                raise
            time.sleep(0.005)
    raise AssertionError("unreachable")


def held_unlinked(root: int, work: Path, file_bytes: int) -> tuple[int, str]:
    """(bytes, problem): what the processes below `root` hold on the work directory's file
    system in files they unlinked while open or mapped (the directory walk no longer sees
    them, their blocks stay taken), and why a process could not be looked at, if one could
    not. A mapping whose fd was closed counts as `file_bytes`, the most one file can hold."""
    from replay.tasks.sandbox.notify import run_members, scan

    device = os.stat(work).st_dev
    seen: set[int] = set()
    total = 0
    for pid in run_members(root, scan()):
        try:
            fds, maps = _open_files(pid)
        except PermissionError:  # the filter keeps programs dumpable: this is not one of them
            return total, f"cannot see the open files of process {pid}"
        except OSError:
            continue  # ended meanwhile
        for fd in fds:
            try:
                st = os.stat(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_nlink == 0 and st.st_dev == device \
                    and st.st_ino not in seen:
                seen.add(st.st_ino)
                total += st.st_blocks * 512
        for line in maps:
            parts = line.split()
            if len(parts) < 7 or parts[-1] != "(deleted)":
                continue
            major, minor = (int(x, 16) for x in parts[3].split(":"))
            inode = int(parts[4])
            if os.makedev(major, minor) == device and inode not in seen:
                seen.add(inode)
                total += file_bytes
    return total, ""
