"""Benchmark 3: the core's own (non-model) time per round, as a share of the model time per
round of the live run in benchmark 2.

The same toy run as `live_overlap` is driven with a zero-latency in-process model; the time
spent inside `llm.complete` (the toy models themselves) is subtracted from the wall time, which
leaves the core: prompts, patches, statistics, state updates. Target: < 1% of the live run's
model time per round.

Run: .venv/bin/python -m benchmarks.core_overhead [--quick]  (reads results/live_overlap.json if
present, else runs benchmark 2 at concurrency 32 first; quick: one repeat against benchmark 2's
quick run)
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from benchmarks import live_overlap
from benchmarks.common import (
    RESULTS_DIR,
    BenchResult,
    TimedLLM,
    bench_parser,
    report,
    results_dir,
    toy_config,
)
from stratune_core.round.run import run
from tests.support.toy import InProcessLLM, ToyTask

REPEATS = 5


def core_seconds_per_round(n_train: int, repeats: int = REPEATS) -> tuple[float, int, float]:
    """(core seconds per round, rounds, model seconds) of the fastest of `repeats` runs."""
    best: tuple[float, int, float] | None = None
    for _ in range(repeats):
        timed = TimedLLM(InProcessLLM())
        start = time.perf_counter()
        result = run(toy_config(), ToyTask(n_train=n_train), timed)
        wall = time.perf_counter() - start
        row = ((wall - timed.model_seconds) / max(1, result.rounds), result.rounds,
               timed.model_seconds)
        best = row if best is None or row < best else best
    assert best is not None
    return best


def _live_figures(fresh: dict[str, Any] | None) -> dict[str, Any]:
    if fresh is not None:
        return fresh
    path = RESULTS_DIR / "live_overlap.json"
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))["details"]["concurrency_32"]
    return live_overlap.live_run(concurrency=live_overlap.CONCURRENCY)


def measure(live: dict[str, Any] | None = None, repeats: int = REPEATS) -> BenchResult:
    live = _live_figures(live)
    core, rounds, model_s = core_seconds_per_round(live["n_train"], repeats)
    model_per_round = live["model_seconds_per_round"]
    share = core / model_per_round
    summary = (
        f"core/model time per round = {share * 100:.2f}% (target < 1%): core "
        f"{core * 1000:.2f} ms/round over {rounds} rounds with a zero-latency model, vs "
        f"{model_per_round * 1000:.0f} ms/round of model time in the live run"
    )
    return BenchResult(
        name="core_overhead", figure=round(share * 100, 4), target=1.0, unit="%", strict=True,
        summary=summary,
        details={"core_seconds_per_round": round(core, 6), "rounds": rounds,
                 "in_process_model_seconds": round(model_s, 4),
                 "live_model_seconds_per_round": model_per_round,
                 "live_concurrency": live["concurrency"], "n_train": live["n_train"]},
    )


def main(argv: Sequence[str] | None = None) -> BenchResult:
    args = bench_parser(__doc__).parse_args(argv)
    if args.quick:  # never the committed live figures: their n_train is the full run's
        live = live_overlap.live_run(concurrency=live_overlap.CONCURRENCY,
                                     n_train=live_overlap.QUICK_N_TRAIN,
                                     latency=live_overlap.QUICK_LATENCY)
        return report(measure(live, repeats=1), results_dir(args))
    return report(measure(), results_dir(args))


if __name__ == "__main__":
    main()
