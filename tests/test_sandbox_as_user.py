"""The hostile suite again, as an ordinary user: a dropped uid with no capabilities.

Started as root, the test gives an unused uid a scratch HOME (with a 0600 ~/.aws/credentials
of its own) and runs the hostile suites and `test_sandbox.py` as that uid. The uid
must be able to run this interpreter and read the checkout: where either lives under a 0700
directory such as /root or a `mktemp -d`, a private mount namespace (bubblewrap, as root, no
other namespace) lays a 0755 tmpfs over that directory with only them bound back into it. Nothing else of the machine
changes for the user: its processes, /tmp, /dev/shm, sockets and cgroups are the host's.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from replay.tasks.sandbox.bubblewrap import executable as bwrap_executable
from replay.tasks.sandbox.layout import interpreter_roots

USER = 48611  # no account of this machine uses it
PROJECT = Path(__file__).resolve().parents[1]


def _closed_ancestor(path: Path) -> Path | None:
    """The outermost ancestor of `path` that others may not traverse."""
    for parent in reversed(path.parents):
        if parent != Path("/") and not os.stat(parent).st_mode & stat.S_IXOTH:
            return parent
    return None


def _as_user_argv(argv: list[str]) -> list[str]:
    drop = ["setpriv", f"--reuid={USER}", f"--regid={USER}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--"]
    # The checkout too: the user's pytest reads the tests from it (a clone in `mktemp -d`).
    roots = sorted({*interpreter_roots(), PROJECT}, key=lambda r: len(r.parts))
    hidden = {a for r in roots if (a := _closed_ancestor(r)) is not None}
    if not hidden:
        return [*drop, *argv]
    bwrap = bwrap_executable()
    if bwrap is None:
        pytest.skip("the interpreter is in a closed directory and bwrap is not installed")
    binds = ["--dev-bind", "/", "/"]
    for closed in sorted(hidden):
        binds += ["--tmpfs", str(closed)]
    for root in roots:
        closed = next((h for h in hidden if root.is_relative_to(h)), None)
        if closed is not None:  # mount-point directories bwrap would make 0700
            for step in reversed(root.parents):
                if step.is_relative_to(closed) and step != closed:
                    binds += ["--perms", "0755", "--dir", str(step)]
        binds += ["--ro-bind", str(root), str(root)]
    return [bwrap, *binds, "--", *drop, *argv]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to another uid")
def test_hostile_suite_passes_as_an_ordinary_user() -> None:
    """Every hostile probe and sandbox test passes, nothing skipped, for a non-root user."""
    scratch = Path(tempfile.mkdtemp(prefix="stratune-user-"))
    try:
        home = scratch / "home"
        (home / ".aws").mkdir(parents=True)
        (home / ".aws" / "credentials").write_text("aws_secret_access_key = USER-SECRET\n")
        for path in (scratch, home, home / ".aws", home / ".aws" / "credentials"):
            os.chown(path, USER, USER, follow_symlinks=False)
        os.chmod(home / ".aws" / "credentials", 0o600)
        argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                "--basetemp", str(scratch / "pytest"), "-W", "ignore::pytest.PytestWarning",
                "tests/test_sandbox_hostile.py", "tests/test_sandbox_hostile_procs.py",
                "tests/test_sandbox_hostile_kernel.py", "tests/test_sandbox_hostile_outputs.py",
                "tests/test_sandbox_hostile_host.py", "tests/test_sandbox_hostile_leaks.py",
                "tests/test_sandbox_tiers.py", "tests/test_sandbox.py"]
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
               "PYTHONDONTWRITEBYTECODE": "1"}
        done = subprocess.run(_as_user_argv(argv), cwd=PROJECT, env=env, capture_output=True,
                              text=True, timeout=900, check=False)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    tail = done.stdout[-3000:] + done.stderr[-2000:]
    assert done.returncode == 0, tail
    summary = done.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"\d+ passed in [\d.]+s( \([\d:]+\))?", summary), tail
