"""Benchmark: the same toy run live and with `batch=on`, against the fake server.

The toy target and optimizer answer behind `FakeAnthropicServer`, reached through the real SDK
and a real `CachedLLM` over a fresh cache; the target spec is written as a user would
(`anthropic:claude-haiku-4-5?base_url=...&batch=on`). Reported:

- paid target cost, batch over live (target <= 0.5x): with every target wave through the Batch
  API (`batch_min=1`), and with the default `batch_min=8` (smaller waves go live);
- identical events, live vs batch (yes/no);
- wall time of a run whose batches take 30 s to process, against the same run live (a shorter
  run: two rounds, since each dependent target wave then waits for its batch).

Run: .venv/bin/python -m benchmarks.batch_cost [--n-train 48] [--no-slow] [--quick]  (quick: 12
samples, 10 ms per call, the slow run with 50 ms batches polled every 20 ms)
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from typing import Any

import anthropic  # noqa: F401  (its ~1 s import is process start-up, not part of the timed run)

from benchmarks.common import (
    OPTIMIZER_MODEL,
    BenchResult,
    ToyResponder,
    bench_parser,
    report,
    results_dir,
    toy_config,
)
from llm_cache.backends import backend_for
from llm_cache.backends.anthropic_backend import AnthropicBackend
from llm_cache.client import CachedLLM
from llm_cache.records import CallKind, Role
from llm_cache.testing.fake_server import FakeAnthropicServer
from stratune_core.round.run import run
from tests.support.toy import ToyTask

FAKE_KEY = "sk-ant-bench-not-a-real-key"
LATENCY = 0.2  # per live call, as in live_overlap
SLOW_BATCH = 30.0  # seconds a batch takes to process in the wall-time comparison
DEFAULT_N_TRAIN = 48
ROUNDS = 2  # of the wall-time comparison (round 1 of the toy run pays only 3 target calls)
QUICK_N_TRAIN, QUICK_LATENCY = 12, 0.01


def one_run(*, batch: str | None, batch_delay: float = 0.05, n_train: int = DEFAULT_N_TRAIN,
            latency: float = LATENCY, **config: Any) -> dict[str, Any]:
    """One run; `batch`: None for live, else the spec options after `batch=on`."""
    with (
        FakeAnthropicServer(responder=ToyResponder(), latency=latency,
                            batch_delay=batch_delay) as fake,
        tempfile.TemporaryDirectory(prefix="stratune-bench-") as tmp,
    ):
        target = f"anthropic:claude-haiku-4-5?base_url={fake.url}"
        if batch is not None:
            target += f"&batch=on{batch}"
        backends = {
            Role.TARGET: backend_for(target, api_key=FAKE_KEY),
            Role.OPTIMIZER: AnthropicBackend(OPTIMIZER_MODEL, api_key=FAKE_KEY, base_url=fake.url),
        }
        with CachedLLM.open(f"{tmp}/cache", backends=backends, mode="live", concurrency=32) as llm:
            start = time.perf_counter()
            result = run(toy_config(**config), ToyTask(n_train=n_train), llm)
            wall = time.perf_counter() - start
            row = llm.accounting().by_kind()[CallKind.TARGET_EXECUTION]
        batches = len(fake.batches.batches)
    return {"events": result.events, "rounds": result.rounds, "wall_seconds": round(wall, 3),
            "target_cost_usd": row.cost_usd, "target_paid_calls": row.paid_calls,
            "target_batch_calls": row.batch_calls, "batches": batches}


def measure(n_train: int = DEFAULT_N_TRAIN, slow: bool = True, latency: float = LATENCY,
            slow_batch: float = SLOW_BATCH, slow_options: str = "") -> BenchResult:
    """`slow_options`: the spec options of the slow run after `batch=on` (none: the default
    polling, which is what the slow run measures)."""
    live = one_run(batch=None, n_train=n_train, latency=latency)
    every = one_run(batch="&batch_min=1&batch_poll=0.02", n_train=n_train, latency=latency)
    default = one_run(batch="&batch_poll=0.02", n_train=n_train, latency=latency)
    same = live["events"] == every["events"] == default["events"]
    ratio = every["target_cost_usd"] / live["target_cost_usd"]
    ratio_default = default["target_cost_usd"] / live["target_cost_usd"]
    details: dict[str, Any] = {
        "n_train": n_train, "live_latency_s": latency, "identical_events": same,
        **{f"{name}_{k}": v for name, r in (("live", live), ("batch_min_1", every),
                                            ("batch_min_8", default))
           for k, v in r.items() if k != "events"},
        "target_cost_ratio_batch_min_1": round(ratio, 4),
        "target_cost_ratio_batch_min_8": round(ratio_default, 4),
    }
    wall = ""
    if slow:
        short_live = one_run(batch=None, n_train=n_train, latency=latency, max_rounds=ROUNDS)
        batched = one_run(batch=slow_options, batch_delay=slow_batch, n_train=n_train,
                          latency=latency, max_rounds=ROUNDS)
        details.update({"slow_batch_delay_s": slow_batch,
                        "short_run_live_wall_s": short_live["wall_seconds"],
                        "short_run_batch_wall_s": batched["wall_seconds"],
                        "short_run_batches": batched["batches"],
                        "short_run_identical_events": short_live["events"] == batched["events"]})
        per_wave = ((batched["wall_seconds"] - short_live["wall_seconds"])
                    / max(1, batched["batches"]))
        polling = f"`{slow_options}`" if slow_options else "the default polling"
        wall = (f"; {ROUNDS} rounds with {slow_batch:g} s batches: "
                f"{batched['wall_seconds']:.0f} s vs {short_live['wall_seconds']:.1f} s live "
                f"({batched['batches']} batches, +{per_wave:.0f} s each with {polling})")
    summary = (
        f"paid target cost batch/live = {ratio:.2f}x with every target wave batched "
        f"(batch_min=1), {ratio_default:.2f}x with the default batch_min=8 "
        f"({default['target_batch_calls']} of {default['target_paid_calls']} target calls in "
        f"{default['batches']} batches); identical events: {'yes' if same else 'NO'}{wall}"
    )
    return BenchResult(name="batch_cost", figure=round(ratio, 4), target=0.5, summary=summary,
                       details=details)


def main(argv: Sequence[str] | None = None) -> BenchResult:
    parser = bench_parser(__doc__)
    parser.add_argument("--n-train", type=int, default=DEFAULT_N_TRAIN)
    parser.add_argument("--no-slow", action="store_true",
                        help=f"skip the wall-time run with {SLOW_BATCH:.0f} s batches")
    args = parser.parse_args(argv)
    if args.quick:  # the slow run's code with 50 ms batches polled every 20 ms
        measured = measure(QUICK_N_TRAIN, slow=not args.no_slow, latency=QUICK_LATENCY,
                           slow_batch=0.05, slow_options="&batch_poll=0.02")
    else:
        measured = measure(args.n_train, slow=not args.no_slow)
    return report(measured, results_dir(args))


if __name__ == "__main__":
    main()
