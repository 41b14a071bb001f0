"""Table 6 (fixed revision operators): one search strategy with one revision form per run,
rows I1-I3, columns F1-F4, against the initial skill and adaptive selection."""

from __future__ import annotations

from collections.abc import Sequence

from replay.compare.group import by_pair_label_dataset, datasets, initial_stat, score_stat
from replay.compare.model import Column, Row, Table, fmt_stat
from replay.compare.runs import METHOD, Run
from stratune_core.records.form_spec import FORM_SPECS

STRATEGIES = (("I1", "I1 direct revision"), ("I2", "I2 iterative refinement"),
              ("I3", "I3 parallel sampling"))
FORMS = tuple((s.code, f"{s.code} {s.column}") for s in FORM_SPECS)  # (code, column title)


def build(runs: Sequence[Run], by: Sequence[str] = ()) -> list[Table]:
    tables = []
    for pair, labels in sorted(by_pair_label_dataset(runs, ()).items()):
        for name in datasets(runs):
            found = {(s, f): labels.get(f"{s}+{f}", {}).get(name, [])
                     for s, _ in STRATEGIES for f, _ in FORMS}
            if not any(found.values()):
                continue
            rows = [Row([title, *(score_stat(found[(s, f)]) for f, _ in FORMS)])
                    for s, title in STRATEGIES]
            initial = fmt_stat(initial_stat(labels, name), 2)
            adaptive = fmt_stat(score_stat(labels.get(METHOD, {}).get(name, [])), 2)
            tables.append(Table(
                id="fixed_operators", title=f"{name} test scores with one fixed revision operator "
                                            f"({pair})",
                columns=[Column(""), *(Column(title, "stat") for _, title in FORMS)],
                rows=rows, notes=[f"Initial skill: {initial}",
                                  f"{METHOD}, adaptive strategy and form: {adaptive}"]))
    return tables
