"""Where a run's files live on the host, and which host paths a sandboxed program may read.

A run directory (0700, fresh per run) holds `prog/` (runner and solution, read-only to the
program), `work/` (the only writable place: the input copy, the output, HOME and TMPDIR in
the Landlock tier) and the captured stdout/stderr. The program may read the system
directories, the interpreter and the virtualenv, wherever they live (bound read-only by
bubblewrap, allowed by Landlock): not the project, the data, the cache or the run directory.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from attrs import frozen

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/mime.types")
DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")
NOBODY = 65534  # the uid a program started by root runs as, in every tier


def interpreter_roots() -> tuple[Path, ...]:
    """The interpreter's install prefixes and the virtualenv, outside the system dirs."""
    candidates = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                  os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))}
    roots: list[Path] = []
    for raw in sorted(candidates):
        path = Path(os.path.realpath(raw))
        if path == Path("/") or any(path.is_relative_to(d) for d in SYSTEM_DIRS):
            continue
        roots.append(path)
    # Keep only the outermost of nested roots.
    return tuple(p for p in roots if not any(p != q and p.is_relative_to(q) for q in roots))


def visible_to_program(path: Path) -> bool:
    """True if a sandboxed program could read `path` through the interpreter binds."""
    real = Path(os.path.realpath(path))
    roots = (*map(Path, SYSTEM_DIRS), *interpreter_roots())
    return any(real.is_relative_to(r) for r in roots)


@frozen
class RunDir:
    base: Path

    @property
    def prog(self) -> Path:
        return self.base / "prog"

    @property
    def work(self) -> Path:
        return self.base / "work"

    @property
    def stdout(self) -> Path:
        return self.base / "stdout"

    @property
    def stderr(self) -> Path:
        return self.base / "stderr"
