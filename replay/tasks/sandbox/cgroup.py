"""One cgroup per sandboxed run: aggregate memory and process limits, and a kill that
reaches every process of the run, however it detached itself.

The group is made below the cgroup this process already lives in, so the run stays inside
whatever limits the machine put on StraTune. cgroup v2 needs `memory` and `pids` enabled in
that cgroup's `cgroup.subtree_control`; cgroup v1 needs writable `memory` and `pids`
hierarchies (root). Where neither works, `probe()` says why and the caller falls back.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from pathlib import Path

from attrs import frozen

ROOT = Path("/sys/fs/cgroup")
_COUNTER = itertools.count()


def _own_paths() -> dict[str, str]:
    """controller -> this process's cgroup path ("" is the v2 unified line)."""
    out: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            out[name] = path
    return out


def _parents() -> tuple[str, tuple[Path, ...]]:
    """("v2"|"v1", the directories new groups are made in); raises OSError if unusable."""
    own = _own_paths()
    if (ROOT / "cgroup.controllers").is_file() and "" in own:
        base = ROOT / own[""].lstrip("/")
        enabled = (base / "cgroup.subtree_control").read_text().split()
        if {"memory", "pids"} <= set(enabled):
            return "v2", (base,)
        raise OSError(f"cgroup v2: memory and pids are not delegated to {base}")
    dirs = []
    for name in ("memory", "pids"):
        if name not in own or not (ROOT / name).is_dir():
            raise OSError(f"cgroup v1: no {name} hierarchy under {ROOT}")
        dirs.append(ROOT / name / own[name].lstrip("/"))
    return "v1", tuple(dirs)


@frozen
class RunGroup:
    version: str
    dirs: tuple[Path, ...]  # v2: one; v1: memory, pids

    @classmethod
    def create(cls, memory_bytes: int, processes: int) -> RunGroup:
        version, parents = _parents()
        name = f"stratune-{os.getpid()}-{next(_COUNTER)}"
        dirs = tuple(parent / name for parent in parents)
        made: list[Path] = []
        try:
            for d in dirs:
                d.mkdir()
                made.append(d)
            if version == "v2":
                (dirs[0] / "memory.max").write_text(str(memory_bytes))
                (dirs[0] / "memory.swap.max").write_text("0")
                (dirs[0] / "pids.max").write_text(str(processes))
            else:
                (dirs[0] / "memory.limit_in_bytes").write_text(str(memory_bytes))
                with contextlib.suppress(OSError):  # absent without swap accounting
                    (dirs[0] / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
                (dirs[1] / "pids.max").write_text(str(processes))
        except OSError:
            for d in made:
                with contextlib.suppress(OSError):
                    d.rmdir()
            raise
        return cls(version, dirs)

    def join(self) -> None:
        """Move the calling process into the group (used between fork and exec)."""
        for d in self.dirs:
            with open(d / "cgroup.procs", "w") as fh:
                fh.write("0")

    def pids(self) -> list[int]:
        try:
            text = (self.dirs[-1] / "cgroup.procs").read_text()
        except FileNotFoundError:  # already removed
            return []
        return [int(p) for p in text.split()]

    def kill(self, timeout: float = 10.0) -> None:
        """SIGKILL every process in the group until it is empty (pids.max bounds forks)."""
        kill_file = self.dirs[0] / "cgroup.kill"
        deadline = time.monotonic() + timeout
        while (pids := self.pids()) and time.monotonic() < deadline:
            if kill_file.exists():
                kill_file.write_text("1")
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self) -> None:
        self.kill()
        for d in self.dirs:
            for _ in range(100):  # a killed process leaves its cgroup a moment later
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def probe() -> str:
    """'' when per-run groups can be made here, else why not."""
    try:
        RunGroup.create(64 * 1024**2, 8).remove()
    except OSError as exc:
        return str(exc)
    return ""
