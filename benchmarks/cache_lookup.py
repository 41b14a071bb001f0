"""Cached lookups per second through CachedLLM.complete, and one cache read vs a raw read.

Run: .venv/bin/python benchmarks/cache_lookup.py [--n 5000] [--quick] [--results DIR]
Prints one line and writes benchmarks/results/cache_lookup.json (quick: 200 requests, written
only with --results).
"""

from __future__ import annotations

import json
import platform
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import bench_parser, results_dir  # noqa: E402
from llm_cache.backends.function import FunctionBackend  # noqa: E402
from llm_cache.client import CachedLLM  # noqa: E402
from llm_cache.key import request_key  # noqa: E402
from llm_cache.records import Message, Request, Response, Role, Usage  # noqa: E402
from llm_cache.store import CacheStore  # noqa: E402

SKILL = "When solving, restate the question, list the facts, then answer in <answer> tags. " * 25


def make_requests(n: int) -> list[Request]:
    return [
        Request(role=Role.TARGET, model="claude-haiku-4-5-20251001", system=SKILL,
                messages=(Message.user(f"Task {i}: " + "context words " * 20),), max_tokens=256)
        for i in range(n)
    ]


def answer(request: Request) -> Response:
    return Response(text="Reasoning step. " * 12 + "<answer>B</answer>", model=request.model,
                    usage=Usage(input_tokens=600, output_tokens=60))


def per_call_us(fn, items, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for item in items:
            fn(item)
        best = min(best, time.perf_counter() - start)
    return best / len(items) * 1e6


def measure(n: int) -> dict[str, Any]:
    requests = make_requests(n)
    with tempfile.TemporaryDirectory() as tmp:
        with CachedLLM.open(tmp, backends={Role.TARGET: FunctionBackend(answer)}) as llm:
            llm.complete(requests)
        runs = []
        for _ in range(5):
            with CachedLLM.open(tmp, backends={}, mode="replay") as llm:
                start = time.perf_counter()
                out = llm.complete(requests)
                runs.append(time.perf_counter() - start)
                assert all(r.from_cache for r in out)
        best = min(runs)
        keys = [request_key(r) for r in requests]
        store = CacheStore(tmp)
        store_get_us = per_call_us(store.get, keys)
        raw_get_us = per_call_us(store.raw.get, keys)
        key_us = per_call_us(request_key, requests)
        entry_bytes = len(store.raw.get(keys[0]))
        store.close()
    return {
        "n_requests": n,
        "replay_seconds_best_of_5": best,
        "lookups_per_second": n / best,
        "per_request_us_in_complete": best / n * 1e6,
        "request_key_us": key_us,
        "cache_read_us": store_get_us,
        "raw_diskcache_get_us": raw_get_us,
        "entry_bytes": entry_bytes,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--n", type=int, default=5000)
    args = parser.parse_args(argv)
    result = measure(200 if args.quick else args.n)
    print(f"cache lookup: {result['lookups_per_second']:,.0f} cached requests/s through "
          f"complete() ({result['n_requests']} in "
          f"{result['replay_seconds_best_of_5'] * 1000:.0f} ms); one cache read "
          f"{result['cache_read_us']:.1f} µs vs raw diskcache get "
          f"{result['raw_diskcache_get_us']:.1f} µs; key {result['request_key_us']:.1f} µs "
          f"({result['entry_bytes']} B entries)")
    if (out_dir := results_dir(args)) is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "cache_lookup.json").write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
