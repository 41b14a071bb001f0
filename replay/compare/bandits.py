"""Table 7 (bandit selectors): the strategy chosen by the optimizer LLM, by a fixed or replayed
schedule, and by the three bandit rules over the recorded outcomes."""

from __future__ import annotations

from collections.abc import Sequence

from replay.compare.group import INITIAL, by_pair_label_dataset, datasets, initial_stat, stat_row
from replay.compare.model import Column, Row, Table
from replay.compare.runs import METHOD, Run

ROWS = ((METHOD, f"{METHOD}, optimizer LLM"), ("Rot.", "Rot., fixed schedule"),
        ("Replay", "Replay, copied sequence"), ("Bandit, ε-greedy", "ε-greedy"),
        ("Bandit, UCB1", "UCB1"), ("Bandit, Thompson", "Thompson sampling"))


def build(runs: Sequence[Run], by: Sequence[str] = ()) -> Table | None:
    names = datasets(runs)
    rows = []
    for pair, labels in sorted(by_pair_label_dataset(runs, ()).items()):
        if not any(label.startswith("Bandit") for label in labels):
            continue
        for label, title in ROWS:
            if label in labels:
                rows.append(Row([title, *stat_row(labels, label, names)], group=pair))
        rows.append(Row([INITIAL, *(initial_stat(labels, n) for n in names)], group=pair))
    if not rows:
        return None
    return Table(id="bandits", title="Strategy selection by the optimizer LLM, schedules and "
                                     "bandit rules (test score 0–100)",
                 columns=[Column("Strategy selection"), *(Column(n, "stat") for n in names)],
                 rows=rows)
