"""All tables `compare` can print, by name, in the order it prints them."""

from __future__ import annotations

from collections.abc import Sequence

from replay.compare import (
    ablations,
    bandits,
    budget,
    fixed_operators,
    hybrids,
    main_results,
    methods,
    run_summary,
    sequences,
    tokens,
)
from replay.compare.model import Table
from replay.compare.names import NAMES
from replay.compare.runs import Run


def build(runs: Sequence[Run], names: Sequence[str] = NAMES, by: Sequence[str] = ()
          ) -> list[Table]:
    builders = {
        "main": lambda: [main_results.build(runs, by)],
        "methods": lambda: [methods.build(runs, by)],
        "hybrids": lambda: [hybrids.build(runs, by)],
        "ablations": lambda: [ablations.build(runs, by)],
        "fixed_operators": lambda: fixed_operators.build(runs, by),
        "bandits": lambda: [bandits.build(runs, by)],
        "tokens": lambda: [tokens.training_tokens(runs, by)],
        "cost_by_kind": lambda: [tokens.cost_by_kind(runs, by)],
        "sequences": lambda: [sequences.build(runs, by)],
        "budget": lambda: [budget.build(runs, by)],
        "runs": lambda: [run_summary.build(runs, by)],
    }
    out: list[Table] = []
    for name in names:
        out += [t for t in builders[name]() if t is not None]
    return out
