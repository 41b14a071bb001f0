"""`stratune cache stats | explain | prune` through the real entry point."""

from __future__ import annotations

import time

import pytest

from llm_cache.backends.function import FunctionBackend
from llm_cache.client import CachedLLM
from llm_cache.key import request_key
from llm_cache.records import Message, Request, Response, Role, Usage
from llm_cache.store import CacheStore
from replay.cli import main

HAIKU = "claude-haiku-4-5-20251001"


def req(q: str, model: str = HAIKU) -> Request:
    return Request(role=Role.TARGET, model=model, system="s", messages=(Message.user(q),),
                   max_tokens=8)


@pytest.fixture
def cache_dir(tmp_path):
    def fn(r: Request) -> Response:
        return Response(text=f"answer to {r.user_text()}", model=r.model,
                        usage=Usage(input_tokens=1_000_000, output_tokens=0))

    directory = tmp_path / "cache"
    with CachedLLM.open(directory, backends={Role.TARGET: FunctionBackend(fn)}) as llm:
        llm.complete([req("a"), req("b"), req("c", model="gguf:tiny@reset")])
    return directory


def run(capsys, *args: str) -> tuple[int, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out if code == 0 else captured.err


def test_stats_counts_entries_and_recorded_cost(cache_dir, capsys):
    code, out = run(capsys, "cache", "--cache-dir", str(cache_dir), "stats")
    assert code == 0
    assert "3 entries" in out and "0 corrupt" in out
    haiku_line = next(line for line in out.splitlines() if line.startswith(HAIKU))
    assert haiku_line.split()[1] == "2" and haiku_line.endswith("2.0000")


def test_explain_shows_key_components_and_the_stored_response(cache_dir, capsys):
    key = request_key(req("a"))
    code, out = run(capsys, "cache", "--cache-dir", str(cache_dir), "explain", key)
    assert code == 0
    assert key in out and "messages" in out and "answer to a" in out and "scripted" in out


def test_explain_errors(cache_dir, capsys):
    assert run(capsys, "cache", "--cache-dir", str(cache_dir), "explain", "nothex")[0] == 2
    code, out = run(capsys, "cache", "--cache-dir", str(cache_dir), "explain", "0" * 32)
    assert code == 1 and "not in" in out


def test_prune_needs_a_filter(cache_dir, capsys):
    code, out = run(capsys, "cache", "--cache-dir", str(cache_dir), "prune")
    assert code == 2 and "--corrupt" in out


def test_prune_corrupt_only_removes_damaged_entries(cache_dir, capsys):
    store = CacheStore(cache_dir)
    store.raw.set(request_key(req("a")), "damaged")
    store.close()
    code, out = run(capsys, "cache", "--cache-dir", str(cache_dir), "prune", "--corrupt")
    assert code == 0 and "deleted 1 of 3" in out
    store = CacheStore(cache_dir)
    assert len(store) == 2 and store.get(request_key(req("b"))) is not None
    store.close()


def test_prune_by_model_with_dry_run_first(cache_dir, capsys):
    args = ["cache", "--cache-dir", str(cache_dir), "prune", "--model", "gguf:tiny@reset"]
    assert "would delete 1 of 3" in run(capsys, *args, "--dry-run")[1]
    assert "deleted 1 of 3" in run(capsys, *args)[1]
    store = CacheStore(cache_dir)
    assert len(store) == 2 and store.get(request_key(req("c", "gguf:tiny@reset"))) is None
    store.close()


def test_prune_by_age_narrows_with_model(cache_dir, capsys):
    time.sleep(0.01)
    out = run(capsys, "cache", "--cache-dir", str(cache_dir), "prune",
              "--older-than-days", "0", "--model", HAIKU)[1]
    assert "deleted 2 of 3" in out
    out = run(capsys, "cache", "--cache-dir", str(cache_dir), "prune", "--older-than-days", "1")[1]
    assert "deleted 0 of 1" in out
