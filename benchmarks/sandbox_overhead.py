"""The SpreadsheetBench sandbox's cost per program run, against plain `python -I`.

For each tier this machine offers, the same short program (it imports openpyxl, as every
SpreadsheetBench program does, and writes its output) runs REPEATS times through
`run_python` and REPEATS times as `python -I -c` in a fresh temporary directory, the kinds
alternating. The figure is the worst tier's difference of the fastest runs (as
core_overhead takes the fastest of its repeats: on a shared machine the slower runs measure
the neighbours); medians are in the JSON. Target: at most +0.1 s per run.

Run: .venv/bin/python -m benchmarks.sandbox_overhead [--repeats 15] [--quick]  (quick: one run of
each kind; the tiers are those this machine offers, none is an empty row)
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.common import BenchResult, bench_parser, report, results_dir
from replay.tasks.sandbox import Tier, detect, run_python

REPEATS = 15
TARGET_SECONDS = 0.1
PROGRAM = "import openpyxl\nopen(OUTPUT_PATH, 'w').write('done')\n"


def _plain() -> float:
    with tempfile.TemporaryDirectory(prefix="stratune-plain-") as tmp:
        code = f"OUTPUT_PATH = {str(Path(tmp) / 'out.txt')!r}\n{PROGRAM}"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-c", code], check=True, cwd=tmp,
                       env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
        return time.perf_counter() - start


def _sandboxed(tier: Tier) -> float:
    start = time.perf_counter()
    result = run_python(PROGRAM, tier=tier, output_name="out.txt")
    took = time.perf_counter() - start
    if not result.ok:
        raise SystemExit(f"the benchmark program failed in the sandbox: {result.stderr}")
    return took


def measure(repeats: int = REPEATS) -> dict[str, list[float]]:
    """tier -> seconds per run, and 'plain' for python -I. The runs alternate, so a busy
    machine slows every kind alike."""
    tiers = detect().tiers  # detection (one probe run per tier) is paid once, not per run
    for tier in tiers:
        _sandboxed(tier)  # warm: the seccomp filter compiles once per process
    times: dict[str, list[float]] = {"plain": []}
    for _ in range(repeats):
        times["plain"].append(_plain())
        for tier in tiers:
            times.setdefault(tier.name.value, []).append(_sandboxed(tier))
    return times


def main(argv: Sequence[str] | None = None) -> BenchResult:
    parser = bench_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=REPEATS)
    args = parser.parse_args(argv)
    repeats = 1 if args.quick else args.repeats
    times = measure(repeats)
    fastest = {name: min(values) for name, values in times.items()}
    medians = {name: round(statistics.median(values), 3) for name, values in times.items()}
    plain = fastest["plain"]
    overhead = {name: round(value - plain, 3) for name, value in fastest.items() if name != "plain"}
    worst = max(overhead.values(), default=0.0)
    parts = ", ".join(f"{name} {value:+.3f} s" for name, value in overhead.items())
    return report(BenchResult(
        name="sandbox_overhead", figure=round(worst, 3), target=TARGET_SECONDS, unit=" s",
        summary=f"per program run over plain python -I ({plain:.3f} s, fastest runs): {parts}",
        details={"fastest_seconds": fastest, "medians_seconds": medians,
                 "overhead_seconds": overhead, "repeats": repeats},
    ), results_dir(args))


if __name__ == "__main__":
    main()
