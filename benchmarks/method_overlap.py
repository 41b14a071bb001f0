"""Benchmark: each training method (the baselines, GEPA among them, and Table 4's hybrids) at a
fixed fake latency, wall time against the critical path its own waves allow, and the target and
optimizer tokens of the run.

The toy target and the toy optimizer (with the baselines' answers, tests/support/toy_methods.py)
answer after `LATENCY` seconds each, behind a real `CachedLLM` over a fresh cache with
`CONCURRENCY` connections. Every `llm.complete` call that pays a request is a dependent wave;
the bound is sum over waves of ceil(misses / concurrency) * latency. Target: wall / bound <= 1.25
for every method.

Run: .venv/bin/python -m benchmarks.method_overlap [--n-train 48] [--quick]  (quick: 8 samples,
5 ms per call)
"""

from __future__ import annotations

import asyncio
import math
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

from benchmarks.common import (
    BenchResult,
    TimedLLM,
    bench_parser,
    paid_calls,
    report,
    results_dir,
    toy_config,
)
from llm_cache.backends.base import BackendBase
from llm_cache.client import CachedLLM
from llm_cache.records import Request, Response, Role
from llm_cache.retry import RetryDecision
from stratune_core.records.method_spec import SPECS, Generator, StraTuneMethod
from stratune_core.round.registry import iterate_method
from tests.support.toy import ToyTask
from tests.support.toy_methods import MethodOptimizer, method_target

LATENCY = 0.05
CONCURRENCY = 32
DEFAULT_N_TRAIN = 48
QUICK_N_TRAIN, QUICK_LATENCY = 8, 0.005


class SlowBackend(BackendBase):
    """A scripted model that answers after a fixed latency, many calls in flight at once."""

    def __init__(self, fn: Callable[[Request], Response], name: str, latency: float) -> None:
        self.fn, self.name, self.latency = fn, name, latency
        self.concurrency: int | None = None

    async def acomplete(self, request: Request) -> Response:
        await asyncio.sleep(self.latency)
        return self.fn(request)

    def classify(self, exc: BaseException) -> RetryDecision:
        return RetryDecision.no(f"{type(exc).__name__}: {exc}")

    async def aclose(self) -> None:
        return None


def method_run(spec: Any, *, n_train: int, latency: float = LATENCY) -> dict[str, Any]:
    backends = {Role.TARGET: SlowBackend(method_target, "toy-target", latency),
                Role.OPTIMIZER: SlowBackend(MethodOptimizer(), "toy-optimizer", latency)}
    with tempfile.TemporaryDirectory(prefix="stratune-bench-") as tmp, \
            CachedLLM.open(f"{tmp}/cache", backends=backends, mode="live",
                           concurrency=CONCURRENCY) as llm:
        timed = TimedLLM(llm, paid=lambda: paid_calls(llm))
        start = time.perf_counter()
        for _state, _events in iterate_method(spec, toy_config(), ToyTask(n_train=n_train),
                                              timed):
            pass
        wall = time.perf_counter() - start
        by_kind = {row.kind.value: row.usage.total + row.cached_usage.total
                   for row in llm.accounting().rows if row.kind is not None}
        roles = {"target": sum(v for k, v in by_kind.items()
                               if k in ("target_execution", "summary")),
                 "optimizer": sum(v for k, v in by_kind.items()
                                  if k not in ("target_execution", "summary"))}
    waves = [w for w in timed.waves if w.misses]
    bound = sum(math.ceil(w.misses / CONCURRENCY) for w in waves) * latency
    generator = getattr(spec, "generator", None)
    name = spec.method.value if generator is None else f"{generator}-hybrid"
    return {"method": name, "wall_seconds": round(wall, 3),
            "critical_path_s": round(bound, 3), "ratio": round(wall / bound, 3) if bound else None,
            "waves": len(waves), "widest_wave": max((w.misses for w in waves), default=0),
            "target_tokens": roles["target"], "optimizer_tokens": roles["optimizer"],
            "tokens_by_kind": by_kind}


def measure(n_train: int = DEFAULT_N_TRAIN, latency: float = LATENCY) -> BenchResult:
    runs = [method_run(cls(), n_train=n_train, latency=latency) for cls in SPECS
            if cls.method.value != "stratune"]
    runs += [method_run(StraTuneMethod(generator=g), n_train=n_train, latency=latency)
             for g in Generator]
    worst = max(r["ratio"] for r in runs if r["ratio"] is not None)
    summary = "; ".join(f"{r['method']} {r['wall_seconds']:.2f} s / {r['critical_path_s']:.2f} s "
                        f"= {r['ratio']:.2f}x, {r['target_tokens']:,} target + "
                        f"{r['optimizer_tokens']:,} optimizer tok" for r in runs)
    return BenchResult(name="method_overlap", figure=worst, target=1.25,
                       summary=f"worst wall/critical-path {worst:.2f}x (target <= 1.25): {summary}",
                       details={"latency_s": latency, "concurrency": CONCURRENCY,
                                "n_train": n_train, "runs": runs})


def main(argv: Sequence[str] | None = None) -> BenchResult:
    parser = bench_parser(__doc__)
    parser.add_argument("--n-train", type=int, default=DEFAULT_N_TRAIN)
    args = parser.parse_args(argv)
    measured = measure(QUICK_N_TRAIN, QUICK_LATENCY) if args.quick else measure(args.n_train)
    return report(measured, results_dir(args))


if __name__ == "__main__":
    main()
