"""Benchmark: a grid of 28 ablations x 3 seeds (84 cells) on one machine, every call going
through the real SDK to the bundled fake Messages API server, which answers with the scripted
toy models after 200 ms and, like a real endpoint, caps its concurrent requests (429 past it).

Reports:
- grid wall time against the bound the hardware allows, max(longest cell alone, CPU / cores,
  calls x latency / cap) (target <= 1.5x); the three cells with the most optimizer calls (the
  longest chains of dependent calls) and the three that took longest inside the grid are run
  again alone, each in a fresh directory; CPU per call in the grid's process (target < 2 ms)
  and in the server's;
- total requests the server answered against the sum of the cells' own paid calls (identical);
- 429s seen with the shared limit (`max_connections anthropic = cap`, target 0) and without it.

The cells are independent: the Replay ablation follows a run recorded before the grid (as in
budget_audit), so the grid has no dependency chain. The server runs in its own process.
Run: .venv/bin/python -m benchmarks.grid_throughput [--cap 64] [--limit 24] [--seeds 3] [--quick]
(quick: the Replay and released ablations, one seed, 6 samples, 10 ms per call, cap 8)
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from benchmarks.common import BenchResult, bench_parser, cpu_seconds, report, results_dir
from benchmarks.server_process import ServerProcess
from replay.grid.grid_file import load_grid
from replay.grid.run import run_grid
from stratune_core.records.enums import Form, Strategy
from stratune_core.selection.selectors.registry import SELECTORS

LATENCY = 0.2
WORDS = Path(__file__).resolve().parents[1] / "examples" / "grid" / "words"
KEY = "sk-ant-bench-not-a-real-key"
# The Replay ablation needs the source run, so a quick grid keeps it.
QUICK_ABLATIONS = ("replay", "released")


def ablations(replay_source: Path) -> list[tuple[str, str]]:
    """The 28 ablations of budget_audit, as grid-file entries."""
    spellings = [str(s) for cls in SELECTORS for s in cls.examples()]
    out = [(s.replace(":", "-"), f'{{ selector = "{s}" }}') for s in spellings
           if not s.startswith("replay:")]
    out.append(("replay", f'{{ selector = "replay:{replay_source}" }}'))
    out.append(("F4-only", '{ forms = "F4" }'))
    out += [(f"{s.name}+{f.name}", f'{{ operator = "{s.name}+{f.name}" }}')
            for s in Strategy for f in Form]
    out += [(f"no-{flag}", f"{{ no-{flag} = true }}")
            for flag in ("history", "validation", "final-selection")]
    out.append(("released", '{ profile = "released" }'))
    return out


def grid_file(path: Path, entries: Sequence[tuple[str, str]], seeds: Sequence[int], limit: int,
              cap: int | None) -> Path:
    lines = [f"seeds = {list(seeds)}", ""]
    if cap is not None:
        lines += ["[max_connections]", f"anthropic = {cap}", ""]
    lines += ["[tasks.words]", f'task = "{WORDS}"', 'scorer = "regex"', f"limit = {limit}", "",
              "[pairs.toy]", 'target = "anthropic:claude-haiku-4-5"',
              'optimizer = "anthropic:claude-sonnet-4-6"', "", "[ablations]"]
    lines += [f'"{name}" = {value}' for name, value in entries]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _grid(path: Path, out: Path) -> tuple[float, Any]:
    start = time.perf_counter()
    result = run_grid(load_grid(path), out, Console(file=io.StringIO(), width=120))
    return time.perf_counter() - start, result


def _paid_calls(root: Path) -> int:
    return sum(json.loads(p.read_text())["total"]["paid_calls"] for p in root.rglob("usage.json"))


def _optimizer_calls(root: Path) -> dict[str, int]:
    """Each cell's paid calls other than target executions: most are waves of one call, each
    waiting for the last, so the cells with most of them have the longest chains alone."""
    out = {}
    for path in root.rglob("usage.json"):
        rows = json.loads(path.read_text())["rows"]
        out[str(path.parent.relative_to(root))] = sum(
            r["paid_calls"] for r in rows if r["kind"] != "target_execution")
    return out


def _cell_seconds(root: Path) -> dict[str, float]:
    return {str(p.parent.relative_to(root)): (p.parent / "manifest.json").stat().st_mtime
            - p.stat().st_mtime for p in root.rglob("grid_cell.json")}


def measure(cap: int = 64, limit: int = 24, seeds: int = 3, latency: float = LATENCY,
            only: Sequence[str] | None = None) -> BenchResult:
    """`only`: the names of the ablations to run (default all)."""
    server = ServerProcess(cap, latency)
    os.environ["ANTHROPIC_BASE_URL"] = server.url
    os.environ["ANTHROPIC_API_KEY"] = KEY
    try:
        with tempfile.TemporaryDirectory(prefix="stratune-grid-bench-") as tmp:
            base = Path(tmp)
            source = base / "source"  # the run the Replay ablation follows
            _grid(grid_file(base / "source.toml", [("llm", "{}")], [0], limit, None), source)
            entries = ablations(source / "words/toy/llm/seed0")
            if only is not None:
                entries = [e for e in entries if e[0] in only]
                if len(entries) != len(only):
                    raise RuntimeError(f"no ablation named {sorted(set(only) - {e[0] for e in entries})}")
            shared = grid_file(base / "grid.toml", entries, range(seeds), limit, cap)
            before, cpu_before = server.stats(), cpu_seconds()
            wall, result = _grid(shared, base / "grid")
            after, cpu = server.stats(), cpu_seconds() - cpu_before
            cells = _cell_seconds(base / "grid")
            longest = sorted(cells, key=cells.get, reverse=True)[:3]
            # The grid serves narrow waves first, so every cell ends near the grid's end and
            # time in the grid no longer tells which cell is longest alone: the cells with the
            # longest chains of optimizer calls are run alone too.
            chains = _optimizer_calls(base / "grid")
            candidates = dict.fromkeys([*sorted(chains, key=chains.get, reverse=True)[:3],
                                        *longest])
            alone = {}
            for cell in candidates:
                _, _, ablation, seed = cell.split("/")
                single = grid_file(base / "one.toml", [e for e in entries if e[0] == ablation],
                                   [int(seed.removeprefix("seed"))], limit, cap)
                alone[cell], _ = _grid(single, base / f"alone-{len(alone)}")
            unlimited_before = server.stats()
            free = grid_file(base / "free.toml", entries, range(seeds), limit, None)
            free_wall, free_result = _grid(free, base / "free")
            unlimited = server.stats()
            paid = _paid_calls(base / "grid")
    finally:
        server.close()
    answered = after["answered"] - before["answered"]
    rejected = after["rejected"] - before["rejected"]
    free_rejected = unlimited["rejected"] - unlimited_before["rejected"]
    longest_alone = max(alone.values())
    ratio = wall / longest_alone
    cores = os.cpu_count() or 1
    cpu_total = cpu + after["cpu_s"] - before["cpu_s"]
    bound = max(longest_alone, cpu_total / cores, answered * latency / cap)
    states = [s.state for s in result.statuses]
    free_states = [s.state for s in free_result.statuses]
    client_ms, server_ms = (1000 * c / max(1, answered)
                            for c in (cpu, after["cpu_s"] - before["cpu_s"]))
    summary = (
        f"grid wall / max(longest cell alone, CPU / cores, calls x latency / cap) = "
        f"{wall / bound:.2f}x (target <= 1.5): {len(states)} cells ({len(entries)} ablations x "
        f"{seeds} seeds) in {wall:.1f} s; longest cell alone {max(alone, key=alone.get)} "
        f"{longest_alone:.1f} s "
        f"({ratio:.2f}x), CPU {cpu_total:.0f} s on {cores} cores, {answered} calls x "
        f"{latency * 1000:.0f} ms / cap {cap} = {answered * latency / cap:.1f} s; "
        f"CPU per call {client_ms:.2f} ms in the grid's process (target < 2), "
        f"{server_ms:.2f} ms in the server's; "
        f"requests answered {answered} = sum of cells' paid calls {paid}: {answered == paid}; "
        f"429s with the shared limit {rejected} (target 0), without it {free_rejected} "
        f"({free_wall:.1f} s, {free_states.count('done')}/{len(free_states)} cells done)"
    )
    return BenchResult(
        name="grid_throughput", figure=round(wall / bound, 3), target=1.5, summary=summary,
        details={"cells": len(states), "done": states.count("done"), "wall_s": round(wall, 2),
                 "longest_alone_s": {k: round(v, 2) for k, v in alone.items()},
                 "longest_in_grid_s": {k: round(cells[k], 2) for k in longest},
                 "answered": answered, "paid_calls": paid, "rejected_429": rejected,
                 "cpu_s": round(cpu_total, 1), "cores": cores,
                 "ratio_to_longest_alone": round(ratio, 3),
                 "client_cpu_ms_per_call": round(client_ms, 3),
                 "server_cpu_ms_per_call": round(server_ms, 3),
                 "peak_in_flight": after["peak"], "unlimited_429": free_rejected,
                 "unlimited_wall_s": round(free_wall, 2),
                 "unlimited_done": free_states.count("done"), "cap": cap, "limit": limit,
                 "latency_s": latency},
    )


def main(argv: Sequence[str] | None = None) -> BenchResult:
    parser = bench_parser(__doc__)
    parser.add_argument("--cap", type=int, default=64, help="server's concurrent requests")
    parser.add_argument("--limit", type=int, default=24, help="training samples per cell")
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)
    if args.quick:
        measured = measure(cap=8, limit=6, seeds=1, latency=0.01, only=QUICK_ABLATIONS)
    else:
        measured = measure(args.cap, args.limit, args.seeds)
    return report(measured, results_dir(args))


if __name__ == "__main__":
    main()
