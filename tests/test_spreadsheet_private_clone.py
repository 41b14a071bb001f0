"""A checkout inside a 0700 directory (as `mktemp -d` makes, and many home
directories are) still runs SpreadsheetBench programs with their libraries."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]


def test_spreadsheet_tests_pass_in_a_clone_inside_a_0700_directory() -> None:
    """Clone the committed tree into `mktemp -d`, give it this virtualenv (hard links, so its
    files live inside the private directory too) and run the SpreadsheetBench tests there."""
    if shutil.which("git") is None or not (PROJECT / ".git").exists():
        pytest.skip("not a git checkout")
    private = Path(tempfile.mkdtemp(prefix="stratune-private-"))
    try:
        assert stat.S_IMODE(os.stat(private).st_mode) == 0o700
        clone = private / "repo"
        subprocess.run(["git", "clone", "-q", str(PROJECT), str(clone)], check=True,
                       capture_output=True, timeout=120)
        venv = PROJECT / ".venv"
        copy = ["cp", "-al", str(venv), str(clone / ".venv")]
        if subprocess.run(copy, capture_output=True, check=False).returncode != 0:
            shutil.copytree(venv, clone / ".venv", symlinks=True)  # another filesystem
        done = subprocess.run(
            [str(clone / ".venv" / "bin" / "python"), "-m", "pytest", "-p", "no:cacheprovider",
             "tests/test_task_spreadsheet.py", "tests/test_sandbox_hostile.py", "-k",
             "not sandbox_hostile or forging"],
            cwd=clone, capture_output=True, text=True, timeout=600, check=False,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(private),
                 "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"})
    finally:
        shutil.rmtree(private, ignore_errors=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert "passed" in summary and "skipped" not in summary and "failed" not in summary, summary
