"""The sandbox's hostile-probe table: blocked / contained / escaped per setting.

A probe that was blocked or contained but still learnt something a tier cannot hide (a
path's size and times under Landlock, the run directory's own path in a user's mountinfo)
is counted in the last column, with its detail in the listing.

Runs every probe of tests/sandbox_probes.py on every tier this machine offers, as the
current user; started as root it runs again as an unprivileged uid (the same drop the
test suite uses), so one call prints all four settings.

Run: .venv/bin/python -m benchmarks.sandbox_probes [--quick] [--only A,B] [--markdown]  (quick: two of the
probes; markdown: the per-probe table of docs/sandbox.md, each probe's docstring saying what it
tries, so the table is what the probes (and the tests that run them) check)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from replay.tasks.sandbox import Limits, Tier, detect, run
from tests import sandbox_disk_probes as disk_probes
from tests import sandbox_host_probes as host_probes
from tests import sandbox_leak_probes as leak_probes
from tests import sandbox_probes as probes
from tests.sandbox_fixtures import FAST, write_layout

PROJECT = Path(__file__).resolve().parents[1]
# Two probes of about 0.3 s each (proc-sys waits 1.5 s for its child), enough to run the table's
# code on every tier and, as root, for the unprivileged uid.
QUICK_PROBES = ("file-metadata", "sysv-ipc")


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
        "unlinked-files": disk_probes.probe_unlinked,
        "socket-owner-pids": leak_probes.probe_socket_owner,
        "proc-pids": leak_probes.probe_proc_pids,
        "host-file-locks": leak_probes.probe_file_locks,
        "inotify-fanotify": leak_probes.probe_notify_instances,
    }


# The function each probe runs, whose docstring says what it tries (the table's second column)
TRIED: dict[str, Callable[..., object]] = {
    "proc-sys-and-uid": probes.probe_proc_sys, "file-metadata": probes.probe_metadata,
    "sysv-ipc": probes.probe_sysv_ipc, "disk": probes.probe_disk,
    "ptrace-namespaces": probes.probe_ptrace_and_namespaces,
    "answer-handles": probes.probe_gold_metadata, "output-shapes": probes.probe_output_shapes,
    "host-processes": host_probes.probe_host_processes, "posix-ipc": host_probes.probe_posix_ipc,
    "memory-files": host_probes.probe_memfd, "unlinked-files": disk_probes.probe_unlinked,
    "socket-owner-pids": leak_probes.probe_socket_owner, "proc-pids": leak_probes.probe_proc_pids,
    "host-file-locks": leak_probes.probe_file_locks,
    "inotify-fanotify": leak_probes.probe_notify_instances,
}
SETTINGS = ((True, "bubblewrap"), (True, "landlock"), (False, "bubblewrap"), (False, "landlock"))


def tried(name: str) -> str:
    doc = " ".join((TRIED[name].__doc__ or "").split())
    return doc.replace("|", "/")


def markdown(rows: Sequence[dict[str, object]]) -> str:
    """The per-class table of docs/sandbox.md: what each probe tries, its verdict in each of
    the four settings (with what it still learnt, if anything), '-' where not run."""
    lines = ["| probe | what it tries | root, bubblewrap | root, landlock | user, bubblewrap "
             "| user, landlock |", "|---|---|---|---|---|---|"]
    for name in TRIED:
        cells = []
        for root, tier in SETTINGS:
            row = next((r for r in rows if r["probe"] == name and r["tier"] == tier
                        and (r["uid"] == 0) == root), None)
            # what it learnt, without this machine's numbers (a size, a time, a pid)
            learnt = "; ".join(" ".join(w for w in item.split()[:2] if not w.isdigit())
                               for item in str(row["detail"]).split("; ")) if row else ""
            detail = f" ({learnt})" if learnt else ""
            cells.append("-" if row is None else f"{row['verdict']}{detail}".replace("|", "/"))
        lines.append(f"| {name} | {tried(name)} | {' | '.join(cells)} |")
    return "\n".join(lines)


def measure(only: Sequence[str] | None = None) -> list[dict[str, object]]:
    """One row per (tier, probe) for the current uid; `only`: the probes to run (default all)."""
    made: list[Path] = []
    real = tempfile.mkdtemp
    rows = []
    with tempfile.TemporaryDirectory(prefix="stratune-probes-") as tmp:
        # The run directories the sandbox makes, for the probes that inspect them afterwards.
        # `run.tempfile` is the tempfile module itself: restored, or every later mkdtemp of
        # this process (a test's) would keep recording.
        run.tempfile.mkdtemp = lambda *a, **kw: made.append(Path(real(*a, **kw))) or str(made[-1])  # type: ignore[attr-defined]
        try:
            for k, tier in enumerate(detect().tiers):
                scratch = Path(tmp) / str(k)
                scratch.mkdir()
                for name, probe in _probes(scratch, made).items():
                    if only is not None and name not in only:
                        continue
                    outcome = probe(tier, FAST)
                    extra = [line for line in outcome.result.stdout.splitlines()
                             if line.startswith(("STAT", "LEAK"))]
                    rows.append({"uid": os.geteuid(), "tier": tier.name.value, "probe": name,
                                 "verdict": outcome.verdict,
                                 "detail": "; ".join([*outcome.escapes, *extra])[:200]})
        finally:
            run.tempfile.mkdtemp = real  # type: ignore[attr-defined]
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


def main(argv: Sequence[str] | None = None) -> list[dict[str, object]]:
    """Print the listing and the table; return the rows."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"only the probes {QUICK_PROBES}")
    parser.add_argument("--markdown", action="store_true",
                        help="print docs/sandbox.md's per-probe table instead of the listing")
    parser.add_argument("--only", default="",
                        help="comma-separated probe names to run (default: all)")
    parser.add_argument("--json", action="store_true",
                        help="print this uid's rows as JSON (the unprivileged half)")
    args = parser.parse_args(argv)
    only = [n for n in args.only.split(",") if n]
    unknown = sorted(set(only) - set(TRIED))
    if unknown:
        parser.error(f"--only: no probe named {', '.join(unknown)}; known: {', '.join(TRIED)}")
    rows = measure(QUICK_PROBES if args.quick else only or None)
    if args.json:
        print(json.dumps(rows))
        return rows
    if os.geteuid() == 0:
        rows += _as_user([sys.executable, "-m", "benchmarks.sandbox_probes", "--json",
                          *(["--quick"] if args.quick else []),
                          *(["--only", args.only] if only else [])])
    if args.markdown:
        print(markdown(rows))
        return rows
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
    return rows


if __name__ == "__main__":
    main()
