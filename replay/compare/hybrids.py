"""Table 4 (hybrid generation): each method whose entry has a hybrid, followed by that hybrid (its
candidate generation under StraTune's candidate evaluation, `--generator`), then StraTune; test scores
(0-100), mean ± sd over seeds (n), one section per model pair, the best in a column marked * (and bold).
Built only when some run is a hybrid."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from replay.compare.group import by_pair_label_dataset, datasets, stat_row
from replay.compare.methods import ranked
from replay.compare.model import Column, Row, Table
from replay.compare.runs import HYBRID_LABELS, METHOD, Run
from stratune_core.round.registry import METHODS

INDENTED = "    with StraTune evaluation"  # the paper's indented row under its method
# each method with its hybrid (their labels in the runs), in the paper's order
PAIRS = tuple((METHODS[m].label, label) for m, label in HYBRID_LABELS.items())


def build(runs: Sequence[Run], by: Sequence[str] = ()) -> Table | None:
    if by:
        return None  # the layout is by method
    names = datasets(runs)
    rows = []
    for pair, labels in sorted(by_pair_label_dataset(runs, by).items()):
        if not any(label in labels for label in HYBRID_LABELS.values()):
            continue
        # a method is shown with its hybrid even without runs of its own (its cells are —),
        # so that the indented row reads as its hybrid
        present = [row for method, hybrid in PAIRS if method in labels or hybrid in labels
                   for row in ((method, method), (hybrid, INDENTED))]
        present.append((METHOD, METHOD))
        columns = [[attrs.evolve(s, rank=1) if s.rank == 1 else attrs.evolve(s, rank=None)
                    for s in ranked([stat_row(labels, label, names)[j]
                                     for label, _ in present])]
                   for j in range(len(names))]
        for i, (_, shown) in enumerate(present):
            rows.append(Row([shown, *(column[i] for column in columns)], group=pair))
    if not rows:
        return None
    return Table(
        id="hybrids",
        title=f"Candidate generation of {' or '.join(m for m, _ in PAIRS)} under StraTune's "
              "candidate evaluation: test scores (0–100), mean ± sd over seeds (n)",
        columns=[Column("Configuration"), *(Column(n, "stat") for n in names)], rows=rows,
        notes=["indented: the method above it generating the candidates of StraTune's rounds "
               "(--generator); best in a column marked * (and bold); — : no test score"])
