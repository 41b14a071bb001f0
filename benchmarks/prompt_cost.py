"""Benchmark 5: target-input token cost with explicit prompt caching of the skill vs without.

A full toy run whose initial skill is padded past the target model's minimum cacheable prefix
runs against `FakeAnthropicServer` (which emulates the API's cache-write / cache-read usage)
through the real SDK, once as shipped (the backend marks the skill block with `cache_control`)
and once with the marker switched off. The target calls' usage, as the server reported it, is
priced with llm_cache's price table (input, cache-write and cache-read prices; output tokens
left out). Target: cached / uncached <= 0.55. Done for Haiku 4.5 (minimum 4,096 tokens) and
Sonnet 4.6 (1,024).

Caveat: the fake server counts a prefix as written from the first request that carries it, so
concurrent first requests all read; the real API may charge a write to each request that
arrives before the first write completes. The per-skill write count is reported for that reason.

Run: .venv/bin/python -m benchmarks.prompt_cost [--quick]  (quick: 8 samples)
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from typing import Any

import anthropic  # noqa: F401  (import cost is start-up, not part of any figure)

from benchmarks.common import (
    OPTIMIZER_MODEL,
    BenchResult,
    ToyResponder,
    bench_parser,
    report,
    results_dir,
    toy_config,
)
from llm_cache.backends.anthropic_backend import AnthropicBackend
from llm_cache.client import CachedLLM
from llm_cache.prices import default_prices
from llm_cache.records import CallKind, Role, Usage
from llm_cache.testing.fake_server import FakeAnthropicServer, estimate_tokens
from stratune_core.round.run import run
from tests.support.toy import INITIAL_SKILL, ToyTask

MODELS = ("claude-haiku-4-5", "claude-sonnet-4-6")
N_TRAIN = 48
QUICK_N_TRAIN = 8
MARGIN = 1.25  # the skill is this many times the model's minimum
FAKE_KEY = "sk-ant-bench-not-a-real-key"


def long_skill(min_tokens: int) -> str:
    """The toy's initial skill plus neutral reference notes, past `min_tokens` (in the fake
    server's token estimate). The notes name no marker, so the toy target ignores them."""
    lines = [INITIAL_SKILL, "", "Reference notes:"]
    i = 0
    while estimate_tokens("\n".join(lines)) < MARGIN * min_tokens:
        lines.append(f"Note {i}: words are given one per request; read each one letter by letter.")
        i += 1
    return "\n".join(lines)


def input_cost(model: str, usage: Usage) -> float:
    price = default_prices().price(model)
    assert price is not None, f"no price for {model}"
    return price.cost(Usage(input_tokens=usage.input_tokens,
                            cache_write_tokens=usage.cache_write_tokens,
                            cache_read_tokens=usage.cache_read_tokens))


def one_run(model: str, *, cached: bool, n_train: int = N_TRAIN) -> dict[str, Any]:
    minimum = default_prices().cache_min_tokens(model)
    skill = long_skill(minimum)
    task = ToyTask(n_train=n_train, initial=skill)
    config = toy_config(target_model=model)
    with (
        FakeAnthropicServer(responder=ToyResponder(target_model=model)) as fake,
        tempfile.TemporaryDirectory(prefix="stratune-bench-") as tmp,
    ):
        target = AnthropicBackend(model, api_key=FAKE_KEY, base_url=fake.url,
                                  prompt_caching=cached)
        backends = {Role.TARGET: target,
                    Role.OPTIMIZER: AnthropicBackend(OPTIMIZER_MODEL, api_key=FAKE_KEY,
                                                     base_url=fake.url)}
        with CachedLLM.open(f"{tmp}/cache", backends=backends, mode="live", concurrency=32) as llm:
            result = run(config, task, llm)
            row = llm.accounting().by_kind()[CallKind.TARGET_EXECUTION]
        marked = sum(
            1 for r in fake.requests
            if r.body.get("model") == model and any(
                b.get("cache_control") for b in r.body.get("system") or [])
        )
    return {
        "model": model, "min_cacheable_tokens": minimum,
        "skill_tokens": estimate_tokens(skill), "calls": row.paid_calls,
        "calls_with_cache_control": marked, "usage": {
            "input": row.usage.input_tokens, "cache_write": row.usage.cache_write_tokens,
            "cache_read": row.usage.cache_read_tokens},
        "input_cost_usd": round(input_cost(model, row.usage), 6),
        "final_id": result.final_id,
    }


def measure(n_train: int = N_TRAIN) -> BenchResult:
    per_model = {}
    for model in MODELS:
        on = one_run(model, cached=True, n_train=n_train)
        off = one_run(model, cached=False, n_train=n_train)
        if on["final_id"] != off["final_id"]:
            raise RuntimeError(f"{model}: caching changed the run's result")
        per_model[model] = {"ratio": round(on["input_cost_usd"] / off["input_cost_usd"], 4),
                            "cached": on, "uncached": off}
    worst = max(v["ratio"] for v in per_model.values())
    parts = ", ".join(
        f"{m} {v['ratio']:.2f}x (min {v['cached']['min_cacheable_tokens']:,} tokens, skill "
        f"{v['cached']['skill_tokens']:,})" for m, v in per_model.items()
    )
    summary = f"cached/uncached target-input cost = {worst:.2f}x worst (target <= 0.55): {parts}"
    return BenchResult(name="prompt_cost", figure=worst, target=0.55, summary=summary,
                       details={"models": per_model, "n_train": n_train})


def main(argv: Sequence[str] | None = None) -> BenchResult:
    args = bench_parser(__doc__).parse_args(argv)
    return report(measure(QUICK_N_TRAIN if args.quick else N_TRAIN), results_dir(args))


if __name__ == "__main__":
    main()
