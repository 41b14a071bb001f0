"""Where a run's code came from: the installed versions of the packages it runs through and
the git revision, as its manifest records them."""

from __future__ import annotations

import functools
import subprocess
from importlib import metadata
from pathlib import Path

from replay.rundir.serde import Package, TaskSpec
from stratune_core.records.method_spec import MethodSpec
from stratune_core.round.registry import packages_of

PACKAGES = ("stratune", "attrs", "cattrs", "anthropic", "diskcache", "xxhash", "numpy", "rich")


def harness_versions(task: TaskSpec) -> tuple[Package, ...]:
    """A harness run's CLI and the wheel it came in: a replay on another CLI version says so."""
    if task.kind is None:
        return ()
    from replay.harness.cli import cli_version

    sdk = installed_version("claude-agent-sdk")
    return (*((Package(name="claude-agent-sdk", version=sdk),) if sdk else ()),
            Package(name="claude-code", version=cli_version().split()[0]))


def package_versions(method: MethodSpec | None = None) -> tuple[Package, ...]:
    """StraTune's dependencies and the packages `method` runs through (its entry's), as installed."""
    names = (*PACKAGES, *(packages_of(method) if method is not None else ()))
    return tuple(Package(name=n, version=v) for n in names if (v := installed_version(n)))


# Looked up once per process: the code a process runs is the code it imported, so every run
# it starts (each cell of a grid) shares them, and each lookup is slow (a scan of the installed
# packages' metadata; two git subprocesses).
@functools.cache
def installed_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@functools.cache
def git_revision() -> str | None:
    root = Path(__file__).resolve().parents[2]
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    revision = done.stdout.strip()
    if done.returncode != 0 or not revision:
        return None
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                           capture_output=True, text=True, timeout=5, check=False)
    return revision + ("-dirty" if dirty.stdout.strip() else "")
