"""Table 2 (methods x datasets): the test score (0-100) of StraTune and each baseline run under
the same budget, mean ± sd over seeds (n), one section per model pair; in each column the best
method is marked * (and bold) and the second best † (and underlined). The initial skill is shown for
reference and not ranked."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from replay.compare.group import (
    BASELINES,
    INITIAL,
    by_pair_label_dataset,
    datasets,
    initial_stat,
    stat_row,
)
from replay.compare.model import Column, Row, Stat, Table
from replay.compare.runs import METHOD, Run

METHODS = (*BASELINES, METHOD)


def ranked(stats: Sequence[Stat]) -> list[Stat]:
    """The stats with rank 1 on the best mean and 2 on the next distinct mean (ties share)."""
    means = sorted({round(s.mean, 9) for s in stats if s.mean is not None}, reverse=True)
    ranks = {mean: i + 1 for i, mean in enumerate(means[:2])}
    return [attrs.evolve(s, rank=ranks.get(round(s.mean, 9))) if s.mean is not None else s
            for s in stats]


def build(runs: Sequence[Run], by: Sequence[str] = ()) -> Table | None:
    names = datasets(runs)
    rows = []
    for pair, labels in sorted(by_pair_label_dataset(runs, by).items()):
        present = [label for label in METHODS if label in labels]
        if len(present) < 2 and not any(label in BASELINES for label in present):
            continue  # no baseline to compare with in this section
        columns = [ranked([stat_row(labels, label, names)[j] for label in present])
                   for j in range(len(names))]
        rows.append(Row([INITIAL, *(initial_stat(labels, n) for n in names)], group=pair))
        for i, label in enumerate(present):
            rows.append(Row([label, *(column[i] for column in columns)], group=pair))
    if not rows:
        return None
    return Table(
        id="methods", title="Methods under the same budget: test scores (0–100), mean ± sd "
                            "over seeds (n)",
        columns=[Column("Method"), *(Column(n, "stat") for n in names)], rows=rows,
        notes=["best in a column marked * (and bold), second best † (and underlined); "
               "— : no test score"])
