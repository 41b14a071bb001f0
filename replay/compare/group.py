"""Grouping runs the way the paper's tables do: a section per model pair, a row per method
(or per `--by` value), a column per dataset; rows in the paper's order."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from replay.compare.model import Stat
from replay.compare.runs import (
    BASELINE_LABELS,
    DATASETS,
    HYBRID_LABELS,
    MENU_LABELS,
    METHOD,
    Run,
    label_of,
)
from stratune_core.records.form_spec import FORM_SPECS

INITIAL = "Initial skill"
OPERATORS = tuple(f"I{s}+{f.code}" for s in (1, 2, 3) for f in FORM_SPECS)
BANDITS = ("Bandit, ε-greedy", "Bandit, UCB1", "Bandit, Thompson")
SECTIONS = {
    "Fixed search strategy": ("I1 only", "I2 only", "I3 only"),
    "Strategy chosen without the per-round decision": ("Rand.", "Rot.", "Once", "Replay"),
    "Strategy chosen by a bandit rule over the histories": BANDITS,
    "Strategy chosen without the histories": ("No hist.",),
    "Fixed revision form": tuple(MENU_LABELS.values()),
    "Candidate evaluation": ("No valid.", "No final sel."),
    "Fixed revision operator": OPERATORS,
}
BASELINES = tuple(BASELINE_LABELS.values())  # in the registry's order, the paper's
HYBRIDS = tuple(HYBRID_LABELS.values())
PAPER_ORDER = (INITIAL, *BASELINES, METHOD, *HYBRIDS,
               *(label for labels in SECTIONS.values() for label in labels))


def section_of(label: str) -> str:
    return next((title for title, labels in SECTIONS.items() if label in labels), "Other")


def ordered(labels: set[str] | Sequence[str]) -> list[str]:
    rank = {label: i for i, label in enumerate(PAPER_ORDER)}
    return sorted(set(labels), key=lambda label: (rank.get(label, len(rank)), label))


def datasets(runs: Sequence[Run]) -> list[str]:
    paper = list(DATASETS.values())
    names = {run.dataset for run in runs}
    return sorted(names, key=lambda name: (paper.index(name) if name in paper else len(paper),
                                           name))


Cells = dict[str, dict[str, dict[str, list[Run]]]]  # pair -> label -> dataset -> runs


def by_pair_label_dataset(runs: Sequence[Run], by: Sequence[str]) -> Cells:
    out: Cells = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for run in runs:
        out[run.pair][label_of(run, by)][run.dataset].append(run)
    return out


def score_stat(runs: Sequence[Run], which: str = "final") -> Stat:
    return Stat.of(run.score(which) for run in runs)


def initial_stat(labels: dict[str, dict[str, list[Run]]], dataset: str) -> Stat:
    """The initial skill's test score: the same skill in every run of a pair and dataset, so
    one value per seed is taken from whichever runs scored it."""
    per_seed: dict[int, float] = {}
    for runs in labels.values():
        for run in runs.get(dataset, []):
            score = run.score("initial")
            if score is not None:
                per_seed.setdefault(run.record.seed, score)
    return Stat.of(per_seed.values())


def stat_row(labels: dict[str, dict[str, list[Run]]], label: str, names: Sequence[str],
             pick: Callable[[Sequence[Run]], Stat] = score_stat) -> list[Stat]:
    return [pick(labels.get(label, {}).get(name, [])) for name in names]
