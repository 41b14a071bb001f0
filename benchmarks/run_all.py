"""`make bench`: run the five reliability and speed benchmarks, batch_cost, grid_throughput,
method_overlap, sandbox_overhead, cli_startup, episode_overhead and the cache lookup benchmark,
print one table of figure vs target, and leave one JSON per benchmark in benchmarks/results/.

Exit status 0 even when a target is missed: the benchmarks measure, CI's tests decide.
`--quick` runs every benchmark's quick mode (small sizes, seconds; figures that mean nothing,
written only with `--results DIR`). mlflow_stall and sandbox_probes print tables of their own
and run alone.
Run: .venv/bin/python -m benchmarks.run_all [--quick] [--results DIR]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks import (
    batch_cost,
    budget_audit,
    budget_use,
    cli_startup,
    core_overhead,
    episode_overhead,
    grid_throughput,
    live_overlap,
    method_overlap,
    prompt_cost,
    replay_speed,
    sandbox_overhead,
)
from benchmarks.common import BenchResult, bench_parser, results_dir


def _cache_lookup(options: Sequence[str], directory: Path | None) -> BenchResult | None:
    """H2's benchmark runs as its own script; its JSON becomes an untargeted row."""
    script = Path(__file__).resolve().parent / "cache_lookup.py"
    with tempfile.TemporaryDirectory(prefix="stratune-bench-") as tmp:
        out = directory if directory is not None else Path(tmp)
        done = subprocess.run([sys.executable, str(script), *options, "--results", str(out)],
                              capture_output=True, text=True)
        lines = (done.stdout.strip() or done.stderr.strip()).splitlines()
        print(lines[-1] if lines else "cache_lookup: no output", flush=True)
        path = out / "cache_lookup.json"
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
    args = bench_parser(__doc__).parse_args(argv)
    # Each benchmark reads the same two options and decides where its JSON goes.
    options = [*(["--quick"] if args.quick else []),
               *(["--results", str(args.results)] if args.results is not None else [])]
    started = time.perf_counter()
    results = [replay_speed.main(options)]
    live = live_overlap.main(options)
    results.append(live)
    repeats = 1 if args.quick else core_overhead.REPEATS
    results.append(core_overhead.report(
        core_overhead.measure(live.details["concurrency_32"], repeats), results_dir(args)))
    for module in (budget_audit, budget_use, prompt_cost, batch_cost, grid_throughput,
                   method_overlap, sandbox_overhead, cli_startup, episode_overhead):
        results.append(module.main(options))
    if (lookup := _cache_lookup(options, results_dir(args))) is not None:
        results.append(lookup)
    # Wide enough for the table when the output is a file or a pipe (make bench | tee).
    console = Console(width=None if sys.stdout.isatty() else 150)
    console.print(table(results))
    where = results_dir(args)
    console.print(f"JSON results in {where if where is not None else 'no directory (quick)'}; "
                  f"took {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
