"""What one sandboxed run may use, and how the limits become rlimits.

Memory and processes are limits of the whole run, all its processes together. A per-run
cgroup holds them where one can be made (root); elsewhere they are split into per-process
rlimits whose product is the run's total: at most `FALLBACK_PROCESSES` processes, each with
`memory_bytes / FALLBACK_PROCESSES` of address space. RLIMIT_NPROC counts per user namespace
(Linux >= 5.14), so inside bubblewrap's namespace it counts this run's processes only.
"""

from __future__ import annotations

import resource

from attrs import field, frozen, validators

FALLBACK_PROCESSES = 4


def _positive(_inst: object, attribute: object, value: float) -> None:
    if value <= 0:
        raise ValueError(f"Limits.{attribute.name} must be > 0, got {value!r}")  # type: ignore[attr-defined]


@frozen(kw_only=True)
class Limits:
    cpu_seconds: int = field(default=60, validator=_positive)  # per process
    memory_bytes: int = field(default=2 * 1024**3, validator=_positive)  # per run
    processes: int = field(default=64, validator=[validators.ge(2)])  # per run, threads too
    file_bytes: int = field(default=64 * 1024**2, validator=_positive)  # largest file
    tmp_bytes: int = field(default=64 * 1024**2, validator=_positive)  # private /tmp, /dev/shm
    work_bytes: int = field(default=256 * 1024**2, validator=_positive)  # work dir, watched
    work_files: int = field(default=10_000, validator=_positive)
    wall_seconds: float = field(default=120.0, validator=_positive)

    def per_process(self, *, cgroup: bool) -> tuple[int, int]:
        """(address space per process, process count) that keeps the run within its totals."""
        if cgroup:  # the cgroup holds the totals; one process may still take all of it
            return self.memory_bytes, self.processes
        count = min(self.processes, FALLBACK_PROCESSES)
        return self.memory_bytes // count, count

    def rlimits(self, *, cgroup: bool, nproc_base: int = 0) -> tuple[tuple[int, int], ...]:
        """rlimit pairs for the sandboxed process; `nproc_base` adds tasks the user already
        has where RLIMIT_NPROC counts them too (no user namespace). With a cgroup its
        pids.max holds the process count, and RLIMIT_NPROC, which counts every task of the
        uid on the machine, is left alone."""
        memory, count = self.per_process(cgroup=cgroup)
        pairs = [
            (resource.RLIMIT_CPU, self.cpu_seconds),
            (resource.RLIMIT_AS, memory),
            (resource.RLIMIT_FSIZE, self.file_bytes),
            (resource.RLIMIT_CORE, 0),
            (resource.RLIMIT_NOFILE, 256),
        ]
        if not cgroup:
            pairs.append((resource.RLIMIT_NPROC, nproc_base + count))
        return tuple(pairs)


def apply_rlimits(pairs: tuple[tuple[int, int], ...] | list[list[int]]) -> None:
    for which, value in pairs:
        resource.setrlimit(which, (value, value))


DEFAULT_LIMITS = Limits()
