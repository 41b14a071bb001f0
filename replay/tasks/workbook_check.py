"""Parse workbooks in a limited subprocess: the output workbook is written by generated code.

The child (`workbook_reader.py`) gets an address-space and CPU limit, a wall timeout, no
file-size allowance and its own session; whatever it prints is validated before use. A
workbook that exhausts a limit fails its case with a message saying which limit.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

from attrs import frozen

from replay.tasks.sandbox.limits import apply_rlimits
from stratune_core.tasks.spreadsheet_compare import MAX_CELLS, CellReport

READER = Path(__file__).with_name("workbook_reader.py")
PROJECT_ROOT = Path(__file__).resolve().parents[2]


@frozen(kw_only=True)
class CheckLimits:
    memory_bytes: int = 1024**3
    cpu_seconds: int = 30
    wall_seconds: float = 60.0
    max_cells: int = MAX_CELLS


DEFAULT_CHECK_LIMITS = CheckLimits()


class CheckFailed(Exception):
    """The reader could not produce an answer (limit hit, crash, bad reply)."""


def _limit(limits: CheckLimits) -> None:
    apply_rlimits(((resource.RLIMIT_AS, limits.memory_bytes),
                   (resource.RLIMIT_CPU, limits.cpu_seconds),
                   (resource.RLIMIT_FSIZE, 0), (resource.RLIMIT_CORE, 0)))


def _ask(request: dict[str, object], limits: CheckLimits) -> dict[str, object]:
    proc = subprocess.Popen(
        [sys.executable, "-I", str(READER), str(PROJECT_ROOT)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"},
        start_new_session=True, preexec_fn=lambda: _limit(limits))  # noqa: PLW1509
    try:
        out, err = proc.communicate(json.dumps(request).encode(), timeout=limits.wall_seconds)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise CheckFailed(f"checker timed out after {limits.wall_seconds:g}s") from None
    if proc.returncode != 0:
        if proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
            raise CheckFailed("checker hit its CPU limit")
        last = (err.decode("utf-8", "replace").strip().splitlines() or ["no message"])[-1]
        if "MemoryError" in last:
            raise CheckFailed(f"checker hit its memory limit ({limits.memory_bytes >> 20} MiB)")
        raise CheckFailed(f"checker failed (exit {proc.returncode}): {last[:160]}")
    try:
        reply = json.loads(out)
    except ValueError:
        raise CheckFailed("checker gave no readable answer") from None
    if not isinstance(reply, dict):
        raise CheckFailed("checker gave no readable answer")
    return reply


def check(position: str, gold: Path, output: Path, *, show: int = 5,
          limits: CheckLimits = DEFAULT_CHECK_LIMITS) -> CellReport:
    """Compare the answer cells of `output` with `gold`; limits and bad files become errors."""
    request = {"position": position, "gold": str(gold), "output": str(output),
               "max_cells": limits.max_cells, "show": show}
    try:
        reply = _ask(request, limits)
    except CheckFailed as exc:
        return CellReport(correct=0, total=0, error=str(exc))
    if "unreadable" in reply:
        return CellReport(correct=0, total=0, error=str(reply["unreadable"])[:200])
    try:
        return CellReport(correct=int(reply["correct"]), total=int(reply["total"]),
                          mismatches=tuple(str(m)[:200] for m in reply["mismatches"][:show]),
                          error=str(reply["error"])[:200])
    except (KeyError, TypeError, ValueError):
        return CellReport(correct=0, total=0, error="checker gave a malformed answer")


def gold_cells(position: str, gold: Path, *, show: int = 8,
               limits: CheckLimits = DEFAULT_CHECK_LIMITS) -> tuple[str, ...]:
    """The first answer cells of the gold workbook, for feedback; () when unreadable."""
    request = {"position": position, "gold": str(gold), "output": None,
               "max_cells": limits.max_cells, "show": show}
    try:
        reply = _ask(request, limits)
    except CheckFailed:
        return ()
    shown = reply.get("shown")
    return tuple(str(s)[:80] for s in shown[:show]) if isinstance(shown, list) else ()
