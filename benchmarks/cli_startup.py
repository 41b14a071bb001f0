"""Benchmark: how long `stratune --help` takes, against a bare interpreter start.

Each sample is a fresh process (`python -m replay.cli --help`, then `python -c pass`), timed
wall-clock from the parent; the figure is the median `--help` time, the target 0.3 s on an idle
machine. The ratio to the bare start, measured in the same run, says how much of it is ours.
`--help` builds the whole parser, so every command's flags are imported but no command:
a module that pulls a backend, a scorer or the core into the parser shows here.

Run: .venv/bin/python -m benchmarks.cli_startup [--quick]  (quick: one sample of each)
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Sequence

from benchmarks.common import BenchResult, bench_parser, report, results_dir

SAMPLES = 15
QUICK_SAMPLES = 1
TARGET_SECONDS = 0.3


def _seconds(argv: Sequence[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *argv], check=True, capture_output=True)
    return time.perf_counter() - start


def measure(samples: int) -> BenchResult:
    helps, bares = [], []
    for _ in range(samples):  # interleaved, so a burst of load hits both alike
        helps.append(_seconds(["-m", "replay.cli", "--help"]))
        bares.append(_seconds(["-c", "pass"]))
    help_s, bare_s = statistics.median(helps), statistics.median(bares)
    return BenchResult(
        name="cli_startup", figure=round(help_s, 3), target=TARGET_SECONDS, unit=" s",
        summary=f"`stratune --help`: {help_s:.3f} s median of {samples}, "
                f"{help_s / bare_s:.1f}x a bare interpreter start ({bare_s:.3f} s)",
        details={"samples": samples, "help_seconds": help_s, "bare_seconds": bare_s,
                 "ratio_to_bare": help_s / bare_s},
    )


def main(argv: Sequence[str] | None = None) -> BenchResult:
    args = bench_parser(__doc__).parse_args(argv)
    return report(measure(QUICK_SAMPLES if args.quick else SAMPLES), results_dir(args))


if __name__ == "__main__":
    main()
