"""The sandbox's hostile-probe table: blocked / contained / escaped per setting.

A probe that was blocked or contained but still learnt something a tier cannot hide (a
path's size and times under Landlock, the run directory's own path in a user's mountinfo)
is counted in the last column, with its detail in the listing.

Runs every probe of tests/sandbox_probes.py on every tier this machine offers, as the
current user; started as root it runs again as an unprivileged uid (the same drop the
test suite uses), so one call prints all four settings.

Run: .venv/bin/python -m benchmarks.sandbox_probes
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from replay.tasks.sandbox import Limits, Tier, detect, run
from tests import sandbox_host_probes as host_probes
from tests import sandbox_probes as probes
from tests.sandbox_fixtures import FAST, write_layout

PROJECT = Path(__file__).resolve().parents[1]


def _probes(scratch: Path, made: list[Path]) -> dict[str, Callable[[Tier, Limits], probes.Outcome]]:
    own = scratch / "own.txt"
    own.write_text("mine")
    gold = next(write_layout(scratch / "data").glob("SpreadsheetBench/train/spreadsheet/t1/1_*_answer.xlsx"))
    return {
        "proc-sys-and-uid": probes.probe_proc_sys,
        "file-metadata": lambda t, lim: probes.probe_metadata(t, lim, [own, gold]),
        "sysv-ipc": probes.probe_sysv_ipc,
        "disk": lambda t, lim: probes.probe_disk(t, lim, lambda: made),
        "ptrace-namespaces": probes.probe_ptrace_and_namespaces,
        "answer-handles": lambda t, lim: probes.probe_gold_metadata(t, lim, gold),
        "output-shapes": lambda t, lim: probes.probe_output_shapes(t, lim, lambda: made),
        "host-processes": host_probes.probe_host_processes,
        "posix-ipc": host_probes.probe_posix_ipc,
        "memory-files": lambda t, _: host_probes.probe_memfd(t, host_probes.MEMORY),
    }


def measure() -> list[dict[str, object]]:
    """One row per (tier, probe) for the current uid."""
    made: list[Path] = []
    real = tempfile.mkdtemp
    rows = []
    with tempfile.TemporaryDirectory(prefix="stratune-probes-") as tmp:
        run.tempfile.mkdtemp = lambda *a, **kw: made.append(Path(real(*a, **kw))) or str(made[-1])  # type: ignore[attr-defined]
        for k, tier in enumerate(detect().tiers):
            scratch = Path(tmp) / str(k)
            scratch.mkdir()
            for name, probe in _probes(scratch, made).items():
                outcome = probe(tier, FAST)
                extra = [line for line in outcome.result.stdout.splitlines()
                         if line.startswith(("STAT", "LEAK"))]
                rows.append({"uid": os.geteuid(), "tier": tier.name.value, "probe": name,
                             "verdict": outcome.verdict,
                             "detail": "; ".join([*outcome.escapes, *extra])[:200]})
    return rows


def _as_user(argv: list[str]) -> list[dict[str, object]]:
    from tests.test_sandbox_as_user import USER, _as_user_argv

    scratch = Path(tempfile.mkdtemp(prefix="stratune-probes-user-"))
    os.chown(scratch, USER, USER)
    try:
        done = subprocess.run(_as_user_argv(argv), cwd=PROJECT, capture_output=True, text=True,
                              env={"PATH": "/usr/bin:/bin", "HOME": str(scratch),
                                   "TMPDIR": str(scratch), "LANG": "C.UTF-8"}, check=False)
    finally:
        subprocess.run(["rm", "-rf", str(scratch)], check=False)
    if done.returncode != 0:
        raise SystemExit(f"the unprivileged half failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: Sequence[str] | None = None) -> int:
    args = list(argv if argv is not None else sys.argv[1:])
    rows = measure()
    if args == ["--json"]:
        print(json.dumps(rows))
        return 0
    if os.geteuid() == 0:
        rows += _as_user([sys.executable, "-m", "benchmarks.sandbox_probes", "--json"])
    for row in rows:
        who = "root" if row["uid"] == 0 else "user"
        print(f"{who:5} {row['tier']:10} {row['probe']:18} {row['verdict']:9} {row['detail']}")
    print()
    print("| setting | blocked | contained | escaped | of which leak metadata |")
    print("|---|---|---|---|---|")
    for key in sorted({(r["uid"] == 0, r["tier"]) for r in rows}, reverse=True):
        mine = [r for r in rows if (r["uid"] == 0, r["tier"]) == key]
        counts = Counter(r["verdict"] for r in mine)
        leaks = sum(bool(r["detail"]) and r["verdict"] != "escaped" for r in mine)
        who = "root" if key[0] else "non-root"
        print(f"| {who}, {key[1]} | {counts['blocked']} | {counts['contained']} | "
              f"{counts['escaped']} | {leaks} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
