"""Honest costs: what was paid and what the cache answered are shown apart, the paid total is
usage.json's, and `--test-eval` calls are counted as their own kind, outside the budget.

A run on priced Claude model ids through the fake Messages API server is stopped by a 401
part-way, then resumed with `--test-eval`: the resumed session pays for some calls and reads
the others from the cache.
"""

from __future__ import annotations

import json
import re

from benchmarks.common import ToyResponder
from llm_cache.testing.fake_server import FakeAnthropicServer, Fault
from tests.support.cli import stratune

N_TEST = 24  # the toy task's test split


def test_paid_and_cached_apart_and_test_eval_counted(tmp_path):
    out = tmp_path / "run"

    def train(faults: tuple[Fault | None, ...] = ()) -> object:
        with FakeAnthropicServer(responder=ToyResponder(), faults=faults) as fake:
            return stratune("train", "--task", "toy", "--limit", "24", "--target",
                            "anthropic:claude-haiku-4-5", "--optimizer",
                            "anthropic:claude-sonnet-4-6", "--out", str(out), "--test-eval",
                            ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=fake.url)

    stopped = train((None,) * 40 + (Fault.UNAUTHORIZED,))
    assert stopped.returncode == 1
    done = train()
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]

    usage = json.loads((out / "usage.json").read_text())
    total = usage["total"]
    assert total["paid_calls"] > 0 and total["cache_hits"] >= 40
    kinds = {row["kind"]: row for row in usage["rows"]}
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    finished = events[-1]
    assert finished["_type"] == "RunFinished"
    # Training executions are the budget's; test-split calls are outside it.
    assert kinds["target_execution"]["calls"] == finished["spent"] <= finished["budget"]
    evaluated = json.loads((out / "evaluation.json").read_text())
    assert kinds["test_evaluation"]["calls"] == N_TEST * len(evaluated["scores"])

    view = stratune("view", str(out), COLUMNS="100")
    assert view.returncode == 0
    text = view.stdout
    row = next(line for line in text.splitlines() if line.startswith("total "))
    paid, cached = row.split()[-2:]
    assert paid == f"{total['cost_usd']:.4f}" and cached == f"{total['would_have_cost_usd']:.4f}"
    assert float(cached) > 0 and float(paid) > 0
    header = " ".join(text.split())
    assert f"${total['cost_usd']:.4f} paid for {total['paid_calls']} calls" in header
    assert f"{total['cache_hits']} answered from the cache" in header
    assert "test eval." in text and re.search(r"budget used\s+\d+/\d+ executions", text)
