"""Table 1 (main results): test score (0-100) of each method on each dataset, mean ± sd over
seeds with n, one section per model pair, the initial skill first."""

from __future__ import annotations

from collections.abc import Sequence

from replay.compare.group import (
    INITIAL,
    by_pair_label_dataset,
    datasets,
    initial_stat,
    ordered,
    stat_row,
)
from replay.compare.model import Column, Row, Table
from replay.compare.runs import Run


def build(runs: Sequence[Run], by: Sequence[str] = ()) -> Table:
    names = datasets(runs)
    rows = []
    for pair, labels in sorted(by_pair_label_dataset(runs, by).items()):
        rows.append(Row([INITIAL, *(initial_stat(labels, n) for n in names)], group=pair))
        for label in ordered(labels):
            rows.append(Row([label, *stat_row(labels, label, names)], group=pair))
    return Table(
        id="main", title="Test scores (0–100): mean ± sd over seeds (n)",
        columns=[Column("Method"), *(Column(n, "stat") for n in names)], rows=rows,
        notes=["— : no test score (run without --test-eval, or not finished)"])
