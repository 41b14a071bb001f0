"""Benchmark 2: a full live toy run over HTTP vs the critical path the run's own waves allow.

The toy target and optimizer answer behind `FakeAnthropicServer` (200 ms per call), in its own
process as a real endpoint is, and are reached through the real SDK (`AnthropicBackend`) and a
real `CachedLLM` over a fresh cache.
Every `llm.complete` call that pays at least one request is a dependent wave: the core needs its
answers before it can build the next one. The bound used for the ratio is
    sum over waves of ceil(misses_in_wave / concurrency) * latency,
i.e. what a perfect client would need with this many connections. The issue's literal bound (one
latency per wave) is reported too; it ignores the concurrency cap, so it is only reachable when no
wave is wider than the cap. Target: wall / bound <= 1.10. The same run at concurrency 1 is
reported for contrast.

Run: .venv/bin/python -m benchmarks.live_overlap [--n-train 48] [--no-serial] [--http httpx] [--quick]
(quick: 12 samples, 10 ms per call)
"""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import anthropic  # noqa: F401  (its ~1 s import is process start-up, not part of the timed run)

from benchmarks.common import (
    OPTIMIZER_MODEL,
    TARGET_MODEL,
    BenchResult,
    TimedLLM,
    bench_parser,
    cpu_seconds,
    paid_calls,
    report,
    results_dir,
    toy_config,
)
from benchmarks.server_process import ServerProcess
from llm_cache.backends.anthropic_backend import HTTP_LIBRARIES, AnthropicBackend
from llm_cache.client import CachedLLM
from llm_cache.records import Role
from stratune_core.round.run import run
from tests.support.toy import InProcessLLM, ToyTask

LATENCY = 0.2
CONCURRENCY = 32
DEFAULT_N_TRAIN = 48
QUICK_N_TRAIN, QUICK_LATENCY = 12, 0.01
FAKE_KEY = "sk-ant-bench-not-a-real-key"


def live_run(*, concurrency: int, n_train: int = DEFAULT_N_TRAIN, latency: float = LATENCY,
             http: str | None = None) -> dict[str, Any]:
    """One live run; returns its timings, waves and both bounds. `http`: the SDK's HTTP
    library (None: the backend's default)."""
    task = ToyTask(n_train=n_train)
    with (
        ServerProcess(cap=None, latency=latency) as fake,
        tempfile.TemporaryDirectory(prefix="stratune-bench-") as tmp,
    ):
        backends = {
            role: AnthropicBackend(model, api_key=FAKE_KEY, base_url=fake.url, http=http)
            for role, model in ((Role.TARGET, TARGET_MODEL), (Role.OPTIMIZER, OPTIMIZER_MODEL))
        }
        with CachedLLM.open(f"{tmp}/cache", backends=backends, mode="live",
                            concurrency=concurrency) as llm:
            timed = TimedLLM(llm, paid=lambda: paid_calls(llm))
            start, cpu_before = time.perf_counter(), cpu_seconds()
            result = run(toy_config(), task, timed)
            wall = time.perf_counter() - start
            cpu = cpu_seconds() - cpu_before
            paid = paid_calls(llm)
        served = fake.stats()["received"]
    waves = [w for w in timed.waves if w.misses]
    bound = sum(math.ceil(w.misses / concurrency) for w in waves) * latency
    literal = len(waves) * latency
    scripted = run(toy_config(), task, InProcessLLM())
    return {
        "concurrency": concurrency, "latency_s": latency, "n_train": n_train,
        "wall_seconds": round(wall, 4), "model_seconds": round(timed.model_seconds, 4),
        "core_seconds": round(wall - timed.model_seconds, 4),
        "client_cpu_seconds": round(cpu, 4),
        "rounds": result.rounds, "spent": result.spent, "paid_calls": paid,
        "server_requests": served, "waves": len(waves),
        "widest_wave": max((w.misses for w in waves), default=0),
        "critical_path_bound_s": round(bound, 4), "literal_bound_s": round(literal, 4),
        "ratio_to_bound": round(wall / bound, 4) if bound else None,
        "ratio_to_literal_bound": round(wall / literal, 4) if literal else None,
        "model_seconds_per_round": round(timed.model_seconds / max(1, result.rounds), 5),
        "same_events_as_in_process": result.events == scripted.events,
    }


def measure(n_train: int = DEFAULT_N_TRAIN, serial: bool = True, latency: float = LATENCY,
            http: str | None = None) -> BenchResult:
    fast = live_run(concurrency=CONCURRENCY, n_train=n_train, latency=latency, http=http)
    slow = (live_run(concurrency=1, n_train=n_train, latency=latency, http=http) if serial
            else None)
    if not fast["same_events_as_in_process"]:
        raise RuntimeError("the live run over HTTP diverged from the in-process toy run")
    contrast = (
        f"; concurrency 1: {slow['wall_seconds']:.1f} s ({slow['ratio_to_bound']:.2f}x its bound)"
        if slow else ""
    )
    summary = (
        f"wall/critical-path = {fast['ratio_to_bound']:.2f}x (target <= 1.10): "
        f"{fast['wall_seconds']:.2f} s vs bound {fast['critical_path_bound_s']:.2f} s over "
        f"{fast['waves']} waves (widest {fast['widest_wave']} calls), concurrency {CONCURRENCY}, "
        f"{latency * 1000:.0f} ms/call, {fast['client_cpu_seconds']:.2f} s of client CPU for "
        f"{fast['paid_calls']} calls; vs one latency per wave: "
        f"{fast['ratio_to_literal_bound']:.2f}x{contrast}"
    )
    return BenchResult(
        name="live_overlap", figure=fast["ratio_to_bound"], target=1.10, summary=summary,
        details={"bound_used": "sum over waves of ceil(misses / concurrency) * latency",
                 "concurrency_32": fast, "concurrency_1": slow},
    )


def main(argv: Sequence[str] | None = None) -> BenchResult:
    parser = bench_parser(__doc__)
    parser.add_argument("--n-train", type=int, default=DEFAULT_N_TRAIN)
    parser.add_argument("--no-serial", action="store_true", help="skip the concurrency-1 run")
    parser.add_argument("--http", choices=HTTP_LIBRARIES,
                        help="the SDK's HTTP library (default: the backend's, aiohttp)")
    args = parser.parse_args(argv)
    if args.quick:
        measured = measure(QUICK_N_TRAIN, serial=not args.no_serial, latency=QUICK_LATENCY,
                           http=args.http)
    else:
        measured = measure(args.n_train, serial=not args.no_serial, http=args.http)
    return report(measured, results_dir(args))


if __name__ == "__main__":
    main()
