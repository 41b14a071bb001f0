"""Tables 2 and 3 (ablations): each ablation against the full method on the same pair and
dataset: its score, Δ = ablation − full method (points), and the sign of Δ. Baselines and
hybrids are never rows here, whatever `--by` groups by."""

from __future__ import annotations

from collections.abc import Sequence

from replay.compare.group import by_pair_label_dataset, datasets, ordered, score_stat, section_of
from replay.compare.model import Column, Row, Table, sign_of
from replay.compare.runs import BASELINE_LABELS, HYBRID_LABELS, METHOD, Run, method_of

# Other methods, not ablations of StraTune: the methods and hybrids tables compare them.
NOT_ABLATIONS = frozenset((*BASELINE_LABELS.values(), *HYBRID_LABELS.values()))


def build(runs: Sequence[Run], by: Sequence[str] = ()) -> Table | None:
    runs = [run for run in runs if method_of(run) not in NOT_ABLATIONS]
    names = datasets(runs)
    columns = [Column("Configuration")]
    for name in names:
        columns += [Column(name, "stat"), Column(f"Δ {name}", "number"), Column("sign", "sign")]
    rows = []
    missing_reference = False
    grouped = by_pair_label_dataset(runs, by)
    for pair, labels in sorted(grouped.items()):
        prefix = f"{pair} — " if len(grouped) > 1 else ""
        others = [label for label in ordered(labels) if label != METHOD]
        if not others:
            continue
        reference = {n: score_stat(labels.get(METHOD, {}).get(n, [])) for n in names}
        missing_reference |= METHOD not in labels
        cells: list[object] = [METHOD]
        for n in names:
            cells += [reference[n], None, None]
        rows.append(Row(cells, group=pair if prefix else None))
        for label in others:
            cells = [label]
            for n in names:
                stat = score_stat(labels[label].get(n, []))
                base = reference[n].mean
                delta = None if stat.mean is None or base is None else stat.mean - base
                cells += [stat, delta, sign_of(delta)]
            rows.append(Row(cells, group=prefix + section_of(label)))
    if not rows:
        return None
    notes = ["Δ = ablation − StraTune in points (— when either has no test score)"]
    if missing_reference:
        notes.append("no run of the full method (StraTune) in some pair: its Δ are —")
    return Table(id="ablations", title="Ablations against the full method (test score 0–100)",
                 columns=columns, rows=rows, notes=notes)
