"""Every benchmark module runs in its quick mode and reports its figures under the keys that
`make bench`, its table and docs/performance.md read, so a change that breaks `make bench`
fails here. Quick figures measure nothing: nothing here looks at a value or a timing, only at
the shape of what each benchmark reports (and nothing is written to benchmarks/results/).
"""

from __future__ import annotations

import importlib
import json
import math
import os
import pkgutil
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import benchmarks
from benchmarks import run_all
from benchmarks.common import RESULTS_DIR, BenchResult

# What each BenchResult benchmark's details must hold (others may be there too).
DETAILS = {
    "replay_speed": {"executions", "cached_calls", "replay_seconds", "raw_read_seconds",
                     "core_only_seconds", "seconds_per_3000_executions",
                     "profile_top_self_time"},
    "live_overlap": {"bound_used", "concurrency_32", "concurrency_1"},
    "core_overhead": {"core_seconds_per_round", "rounds", "live_model_seconds_per_round",
                      "n_train"},
    "budget_audit": {"duplicates", "overshoot", "mismatched", "runs"},
    "budget_use": {"n_train", "runs"},
    "prompt_cost": {"models", "n_train"},
    "batch_cost": {"identical_events", "target_cost_ratio_batch_min_1",
                   "target_cost_ratio_batch_min_8", "short_run_batch_wall_s",
                   "short_run_identical_events"},
    "grid_throughput": {"cells", "done", "wall_s", "longest_alone_s", "answered", "paid_calls",
                        "rejected_429", "unlimited_429", "ratio_to_longest_alone",
                        "client_cpu_ms_per_call", "server_cpu_ms_per_call"},
    "method_overlap": {"latency_s", "concurrency", "runs"},
    "sandbox_overhead": {"fastest_seconds", "overhead_seconds", "medians_seconds"},
    "cli_startup": {"samples", "help_seconds", "bare_seconds", "ratio_to_bare"},
    "episode_overhead": {"agent", "claude_code", "ratio"},
}
# Benchmarks that print a table of their own instead of a BenchResult; `make bench` leaves them
# out, each runs alone. cache_lookup is a script whose JSON run_all turns into a row.
STANDALONE = {"mlflow_stall", "sandbox_probes"}
SCRIPTS = {"cache_lookup"}
LIVE_RUN = {"concurrency", "n_train", "wall_seconds", "model_seconds_per_round",
            "critical_path_bound_s", "ratio_to_bound", "same_events_as_in_process"}


@pytest.fixture(autouse=True)
def own_environ() -> Iterator[None]:
    """The benchmarks set variables for the processes they drive (the fake server's URL,
    MLflow's HTTP bounds); they stay out of the other tests."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"benchmarks.{name}")


def test_every_benchmark_module_has_a_quick_test_here():
    names = {m.name for m in pkgutil.iter_modules(benchmarks.__path__)} - {"common", "run_all",
                                                                      "server_process"}
    assert names == set(DETAILS) | STANDALONE | SCRIPTS


def test_make_bench_runs_every_benchmark_but_the_standalone_ones():
    wired = {value.__name__.rsplit(".", 1)[-1] for value in vars(run_all).values()
             if isinstance(value, ModuleType) and value.__name__.startswith("benchmarks.")}
    assert wired == set(DETAILS) - {"common"}


@pytest.mark.parametrize("name", sorted(DETAILS))
def test_quick_mode_reports_its_figures(name: str, tmp_path: Path):
    before = sorted(p.stat().st_mtime_ns for p in RESULTS_DIR.glob("*.json"))
    result = _module(name).main(["--quick", "--results", str(tmp_path)])
    assert isinstance(result, BenchResult) and result.name == name
    assert math.isfinite(result.figure) and result.summary
    assert DETAILS[name] <= set(result.details), set(result.details)
    written = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
    assert written == json.loads(json.dumps(result.to_dict()))
    assert {"date", "cpu", "cores", "machine", "python"} <= set(written)  # when and on what
    assert sorted(p.stat().st_mtime_ns for p in RESULTS_DIR.glob("*.json")) == before
    if name == "live_overlap":
        for run in (result.details["concurrency_32"], result.details["concurrency_1"]):
            assert set(run) >= LIVE_RUN
    elif name == "budget_use":
        for run in result.details["runs"].values():
            assert "error" in run or {"spent", "budget", "rounds", "stop", "unspent",
                                      "round_cost", "screening_sizes"} <= set(run)
    elif name == "prompt_cost":
        assert set(result.details["models"]) == set(_module(name).MODELS)
    elif name == "method_overlap":
        assert all({"method", "ratio", "wall_seconds", "critical_path_s", "target_tokens",
                    "optimizer_tokens"} <= set(run) for run in result.details["runs"])
    elif name == "sandbox_overhead":
        assert "plain" in result.details["fastest_seconds"]
    elif name == "episode_overhead":
        assert {"single_call_s", "episode_s", "ratio", "ratio_cached", "tool_call_s",
                "calls_per_episode"} <= set(result.details["agent"])
        assert result.details["agent"]["calls_per_episode"] == 3  # model, tool, model
        assert "skipped" in result.details["claude_code"] or {
            "direct_call_s", "bare_cli_s", "episode_s", "episode_to_direct",
            "episode_to_bare_cli", "harness_added_s"} <= set(result.details["claude_code"])


def test_cache_lookup_runs_as_make_bench_runs_it(tmp_path: Path):
    row = run_all._cache_lookup(["--quick"], tmp_path)
    assert row is not None and row.name == "cache_lookup" and math.isfinite(row.figure)
    data = json.loads((tmp_path / "cache_lookup.json").read_text(encoding="utf-8"))
    assert data["n_requests"] == 200
    assert {"replay_seconds_best_of_5", "per_request_us_in_complete", "request_key_us",
            "entry_bytes"} <= set(data)


def test_sandbox_probes_quick_table(capsys: pytest.CaptureFixture[str]):
    module = _module("sandbox_probes")
    rows = module.main(["--quick"])
    assert all(set(row) == {"uid", "tier", "probe", "verdict", "detail"} for row in rows)
    assert {row["probe"] for row in rows} <= set(module.QUICK_PROBES)
    # As root the table holds the unprivileged uid's half too.
    assert (os.geteuid() == 0) == any(row["uid"] != 0 for row in rows) or not rows
    assert "| setting | blocked | contained | escaped |" in capsys.readouterr().out


def test_sandbox_probes_markdown_is_the_docs_table(capsys: pytest.CaptureFixture[str]):
    """--markdown prints one row per probe saying what it tries (its docstring) and a cell per
    setting; docs/sandbox.md holds that table with the same probes and the same words."""
    module = _module("sandbox_probes")
    module.main(["--quick", "--markdown"])
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert len(printed) == len(module.TRIED) + 1
    quick = [line for line in printed if line.split(" | ")[0][2:] in module.QUICK_PROBES]
    assert quick and all(line.count("blocked") + line.count("contained") >= 1 for line in quick)
    docs = (Path(__file__).resolve().parents[1] / "docs" / "sandbox.md").read_text(encoding="utf-8")
    rows = {line.split(" | ")[0][2:]: line.split(" | ")[1] for line in docs.splitlines()
            if line.startswith("| ") and line.split(" | ")[0][2:] in module.TRIED}
    assert rows == {name: module.tried(name) for name in module.TRIED}


def test_mlflow_stall_quick_runs_all_three():
    rows = _module("mlflow_stall").main(["--quick"])
    assert set(rows) == {"no tracking", "dead server", "hung server"}
    assert all(math.isfinite(seconds) for seconds in rows.values())
