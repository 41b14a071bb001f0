"""`make bench`: run the five reliability and speed benchmarks, batch_cost, grid_throughput
and the cache lookup benchmark, print one table of figure vs target, and leave one
JSON per benchmark in benchmarks/results/.

Exit status 0 even when a target is missed: the benchmarks measure, CI's tests decide.
Run: .venv/bin/python -m benchmarks.run_all [--quick]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks import (
    batch_cost,
    budget_audit,
    budget_use,
    core_overhead,
    grid_throughput,
    live_overlap,
    method_overlap,
    prompt_cost,
    replay_speed,
    sandbox_overhead,
)
from benchmarks.common import RESULTS_DIR, BenchResult


def _cache_lookup() -> BenchResult | None:
    """H2's benchmark runs as its own script; its JSON becomes an untargeted sixth row."""
    script = Path(__file__).resolve().parent / "cache_lookup.py"
    if not script.exists():
        return None
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    lines = (done.stdout.strip() or done.stderr.strip()).splitlines()
    print(lines[-1] if lines else "cache_lookup: no output", flush=True)
    path = RESULTS_DIR / "cache_lookup.json"
    if done.returncode != 0 or not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    ratio = data["cache_read_us"] / data["raw_diskcache_get_us"]
    return BenchResult(
        name="cache_lookup", figure=round(ratio, 3), target=float("inf"), unit="x",
        summary=f"{data['lookups_per_second']:,.0f} cached requests/s; one verified read "
                f"{ratio:.1f}x a raw diskcache get",
    )


def _fmt(value: float, unit: str) -> str:
    if value == float("inf"):
        return "-"
    return f"{value:g}{unit}" if unit != "x" else f"{value:.2f}x"


def table(results: Sequence[BenchResult]) -> Table:
    t = Table(title="StraTune benchmarks (make bench)")
    t.add_column("benchmark")
    t.add_column("figure", justify="right")
    t.add_column("target", justify="right")
    t.add_column("met")
    t.add_column("what", overflow="fold", max_width=70)
    for r in results:
        op = "<" if r.strict else "<="
        target = "-" if r.target == float("inf") else f"{op} {_fmt(r.target, r.unit)}"
        met = "-" if r.target == float("inf") else ("[green]yes[/]" if r.met else "[red]no[/]")
        t.add_row(r.name, _fmt(r.figure, r.unit), target, met, r.summary.split(": ", 1)[-1])
    return t


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="skip the slow concurrency-1 contrast run, the cache lookup and "
                             "batch_cost's run with 30 s batches")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    results = [replay_speed.main([])]
    live = live_overlap.report(live_overlap.measure(serial=not args.quick))
    results.append(live)
    results.append(core_overhead.report(core_overhead.measure(live.details["concurrency_32"])))
    results.append(budget_audit.main([]))
    results.append(budget_use.main([]))
    results.append(prompt_cost.main([]))
    results.append(batch_cost.main(["--quick"] if args.quick else []))
    results.append(grid_throughput.main(["--seeds", "1"] if args.quick else []))
    results.append(method_overlap.main([]))
    results.append(sandbox_overhead.main(["--repeats", "5"] if args.quick else []))
    if not args.quick and (lookup := _cache_lookup()) is not None:
        results.append(lookup)
    # Wide enough for the table when the output is a file or a pipe (make bench | tee).
    console = Console(width=None if sys.stdout.isatty() else 150)
    console.print(table(results))
    console.print(f"JSON results in {RESULTS_DIR}; took {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
