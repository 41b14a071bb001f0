"""Benchmark 1: replaying a recorded run strictly offline vs raw diskcache reads of its entries.

A toy run with the scripted models is recorded through a real `CachedLLM` (live mode, temp
cache), then replayed with `mode="replay"`; the raw loop reads the same keys, in the same order,
straight from diskcache in the same process. Targets: replay/raw <= 2.0 and a 3,000-execution
replay under 1 s. When a target is missed, a cProfile of one replay names what dominates.

Run: .venv/bin/python -m benchmarks.replay_speed [--n-train 1500] [--quick]  (quick: 40 samples,
one repeat, no minimum of executions)
"""

from __future__ import annotations

import cProfile
import io
import pstats
import tempfile
import time
from collections.abc import Sequence

from benchmarks.common import (
    BenchResult,
    bench_parser,
    report,
    results_dir,
    scripted_backends,
    toy_config,
)
from llm_cache.client import CachedLLM
from llm_cache.key import request_key
from llm_cache.records import Request, Response, Role
from stratune_core.round.run import RunResult, run
from tests.support.toy import InProcessLLM, ToyTask

MIN_EXECUTIONS = 3000
# The toy run stops for lack of progress after ~2.4 executions per training sample, so a
# 6x budget on 500 samples records only ~1,200 executions; 1,500 samples record ~3,500.
DEFAULT_N_TRAIN = 1500
REPEATS = 3
QUICK_N_TRAIN = 40


class _KeyLog:
    def __init__(self, inner: CachedLLM) -> None:
        self.inner = inner
        self.requests: list[Request] = []

    def complete(self, requests: Sequence[Request]) -> tuple[Response, ...]:
        self.requests.extend(requests)
        return self.inner.complete(requests)


def _replay(cache_dir: str, task: ToyTask) -> tuple[float, RunResult]:
    with CachedLLM.open(cache_dir, backends={}, mode="replay") as llm:
        start = time.perf_counter()
        result = run(toy_config(), task, llm)
        return time.perf_counter() - start, result


def _raw_reads(cache_dir: str, keys: Sequence[str]) -> float:
    with CachedLLM.open(cache_dir, backends={}, mode="replay") as llm:
        assert llm.store is not None
        raw = llm.store.raw
        start = time.perf_counter()
        for key in keys:
            if raw.get(key) is None:
                raise RuntimeError(f"raw read: key {key} missing from the recorded cache")
        return time.perf_counter() - start


def _profile(cache_dir: str, task: ToyTask, top: int = 8) -> list[str]:
    profiler = cProfile.Profile()
    with CachedLLM.open(cache_dir, backends={}, mode="replay") as llm:
        profiler.enable()
        run(toy_config(), task, llm)
        profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    rows = []
    for (file, line, name), (_cc, _nc, tottime, cumtime, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append((tottime, cumtime, f"{file.rsplit('/', 2)[-1]}:{line}({name})"))
    rows.sort(reverse=True)
    return [f"{t:.3f}s self, {c:.3f}s cum: {where}" for t, c, where in rows[:top]]


def measure(n_train: int = DEFAULT_N_TRAIN, *, repeats: int = REPEATS,
            min_executions: int = MIN_EXECUTIONS) -> BenchResult:
    task = ToyTask(n_train=n_train)
    with tempfile.TemporaryDirectory(prefix="stratune-bench-") as tmp:
        cache_dir = f"{tmp}/cache"
        with CachedLLM.open(cache_dir, backends=scripted_backends(), mode="live") as llm:
            start = time.perf_counter()
            recorded = run(toy_config(), task, llm)
            record_s = time.perf_counter() - start
        executions = recorded.spent
        if executions < min_executions:
            raise RuntimeError(f"recorded only {executions} executions; raise --n-train")

        with CachedLLM.open(cache_dir, backends={}, mode="replay") as llm:
            log = _KeyLog(llm)
            run(toy_config(), task, log)
        keys = [request_key(r) for r in log.requests]
        targets = sum(r.role is Role.TARGET for r in log.requests)

        replay_s, replayed = min(_replay(cache_dir, task) for _ in range(repeats))
        if replayed.events != recorded.events:
            raise RuntimeError("replay produced different events from the recorded run")
        raw_s = min(_raw_reads(cache_dir, keys) for _ in range(repeats))
        core_s = min(_core_only(task) for _ in range(repeats))
        ratio = replay_s / raw_s
        per_3000 = replay_s * MIN_EXECUTIONS / executions
        profile = _profile(cache_dir, task) if ratio > 2.0 or per_3000 >= 1.0 else []

    summary = (
        f"replay/raw = {ratio:.1f}x (target <= 2.0); {executions} executions "
        f"({len(keys)} cached calls) replayed in {replay_s:.3f} s = {executions / replay_s:,.0f} "
        f"executions/s, {per_3000:.2f} s per 3,000 (target < 1 s); raw reads {raw_s:.3f} s, "
        f"core alone {core_s:.3f} s"
    )
    return BenchResult(
        name="replay_speed", figure=round(ratio, 3), target=2.0, summary=summary,
        details={
            "n_train": n_train, "executions": executions, "target_calls": targets,
            "cached_calls": len(keys), "rounds": recorded.rounds,
            "record_seconds": round(record_s, 4), "replay_seconds": round(replay_s, 4),
            "raw_read_seconds": round(raw_s, 4), "core_only_seconds": round(core_s, 4),
            "seconds_per_3000_executions": round(per_3000, 4),
            "executions_per_second": round(executions / replay_s),
            "target_seconds_per_3000": 1.0, "profile_top_self_time": profile,
        },
    )


def _core_only(task: ToyTask) -> float:
    """The same run with the models answered in process and no cache: the core's own share."""
    llm = InProcessLLM()
    start = time.perf_counter()
    run(toy_config(), task, llm)
    return time.perf_counter() - start


def main(argv: Sequence[str] | None = None) -> BenchResult:
    parser = bench_parser(__doc__)
    parser.add_argument("--n-train", type=int, default=DEFAULT_N_TRAIN)
    args = parser.parse_args(argv)
    if args.quick:
        measured = measure(QUICK_N_TRAIN, repeats=1, min_executions=0)
    else:
        measured = measure(args.n_train)
    return report(measured, results_dir(args))


if __name__ == "__main__":
    main()
