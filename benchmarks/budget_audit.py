"""Benchmark 4: duplicate (skill, sample) executions and budget overshoot over every ablation.

Each ablation of the paper's §4.1 (every selector of the registry including a replayed
sequence, forms=F4, the 12 fixed operators, history / validation / final selection off) plus
the `released` profile runs on the toy world for several seeds. A counting wrapper sees every target request: a (skill, sample)
pair requested twice is a duplicate (the ledger should make re-running a pair free). Overshoot is
spent - budget. Targets: 0 duplicates, 0 overshoot; the count of target requests must also equal
the executions the run charged.

Run: .venv/bin/python -m benchmarks.budget_audit [--seeds 3] [--quick]  (quick: one seed, 12
samples)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from benchmarks.common import (
    BenchResult,
    CountingLLM,
    bench_parser,
    report,
    results_dir,
    toy_config,
)
from stratune_core.config.knobs import Config
from stratune_core.config.profiles import released
from stratune_core.records.enums import Form, Strategy
from stratune_core.round.run import run
from stratune_core.selection.selectors.registry import SELECTORS
from tests.support.toy import InProcessLLM, ToyTask

N_TRAIN = 48


def ablations(seed: int) -> Iterator[tuple[str, Config]]:
    """(name, config) for every ablation at this seed."""
    base = toy_config(seed=seed)
    for cls in SELECTORS:
        for selector in cls.examples():
            yield f"selector={selector}", base.replace(selector=selector)
    yield "forms=F4", base.replace(forms="F4")
    for strategy in Strategy:
        for form in Form:
            yield f"operator={strategy.name}+{form.name}", base.replace(
                operator=f"{strategy.name}+{form.name}")
    for flag in ("history", "validation", "final_selection"):
        yield f"{flag}=off", base.replace(**{flag: False})
    yield "profile=released", released().replace(
        seed=seed, target_model=base.target_model, optimizer_model=base.optimizer_model)


def audit_one(config: Config, n_train: int = N_TRAIN) -> dict[str, Any]:
    llm = CountingLLM(InProcessLLM())
    result = run(config, ToyTask(n_train=n_train), llm)
    return {
        "duplicates": llm.duplicates,
        "overshoot": max(0, result.spent - result.budget),
        "spent": result.spent,
        "budget": result.budget,
        "target_requests": llm.executions,
        "charged_matches_requests": llm.executions == result.spent,
        "rounds": result.rounds,
        "stop": result.stop_reason.value,
    }


def measure(seeds: int = 3, n_train: int = N_TRAIN) -> BenchResult:
    runs: dict[str, dict[str, Any]] = {}
    for seed in range(seeds):
        for name, config in ablations(seed):
            runs[f"{name} seed={seed}"] = audit_one(config, n_train)
    duplicates = sum(r["duplicates"] for r in runs.values())
    overshoot = sum(r["overshoot"] for r in runs.values())
    mismatched = sorted(k for k, r in runs.items() if not r["charged_matches_requests"])
    summary = (
        f"duplicates = {duplicates}, overshoot = {overshoot} (targets 0 and 0) over {len(runs)} "
        f"runs ({len(runs) // seeds} ablations x {seeds} seeds, "
        f"{sum(r['spent'] for r in runs.values())} executions); charged != requested in "
        f"{len(mismatched)} runs"
    )
    return BenchResult(
        name="budget_audit", figure=float(duplicates + overshoot + len(mismatched)), target=0.0,
        unit="", summary=summary,
        details={"n_train": n_train, "duplicates": duplicates, "overshoot": overshoot, "mismatched": mismatched,
                 "runs": runs},
    )


def main(argv: Sequence[str] | None = None) -> BenchResult:
    parser = bench_parser(__doc__)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)
    measured = measure(1, n_train=12) if args.quick else measure(args.seeds)
    return report(measured, results_dir(args))


if __name__ == "__main__":
    main()
