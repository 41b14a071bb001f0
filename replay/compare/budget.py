"""Budget: executions spent against B, rounds, accepted and saved candidates, per method."""

from __future__ import annotations

from collections.abc import Sequence

from replay.compare.group import by_pair_label_dataset, datasets, ordered
from replay.compare.model import Column, Row, Stat, Table
from replay.compare.runs import Run
from stratune_core.records.enums import Verdict
from stratune_core.state.candidate_events import CandidateDecided
from stratune_core.state.events import ExecutionsCharged, RoundStarted, RunFinished, RunStarted


def verdicts(run: Run, verdict: Verdict) -> int:
    return sum(1 for e in run.of_type(CandidateDecided) if e.verdict is verdict)


def spent_of(run: Run) -> tuple[int, int]:
    spent = 0
    for event in run.events:
        if isinstance(event, ExecutionsCharged | RunFinished):
            spent = event.spent
    started = run.of_type(RunStarted)
    return spent, started[0].budget if started else 0


def tool_seconds(run: Run) -> float | None:
    """Seconds the run's tool calls took (usage.json's tool rows); None: the run calls none."""
    rows = [r for r in (run.usage or {}).get("rows", ()) if r.get("kind") == "tool_call"]
    return sum(float(r.get("seconds", 0.0)) for r in rows) if rows else None


def build(runs: Sequence[Run], by: Sequence[str] = ()) -> Table | None:
    tools = any(tool_seconds(r) is not None for r in runs)
    rows = []
    for pair, labels in sorted(by_pair_label_dataset(runs, by).items()):
        for name in datasets(runs):
            for label in ordered(labels):
                group = labels[label].get(name, [])
                if not group:
                    continue
                spent = [spent_of(r) for r in group]
                rows.append(Row([
                    name, label, Stat.of(s for s, _ in spent),
                    sum(b for _, b in spent) / len(spent),
                    Stat.of(100.0 * s / b for s, b in spent if b),
                    Stat.of(len(r.of_type(RoundStarted)) for r in group),
                    Stat.of(verdicts(r, Verdict.ACCEPTED) for r in group),
                    Stat.of(verdicts(r, Verdict.SAVED) for r in group),
                    *([Stat.of(tool_seconds(r) or 0.0 for r in group)] if tools else []),
                    f"{sum(r.finished for r in group)}/{len(group)}"], group=pair))
    if not rows:
        return None
    columns = [Column("Dataset"), Column("Method"), Column("Spent", "stat", 1),
               Column("Budget", "number", 0), Column("Spent (%)", "stat", 1),
               Column("Rounds", "stat", 1), Column("Accepted", "stat", 2),
               Column("Saved", "stat", 2),
               *([Column("Tool time (s)", "stat", 1)] if tools else []), Column("Finished")]
    return Table(id="budget", title="Budget: target executions spent, rounds, accepted and "
                                    "saved candidates (mean ± sd (n))",
                 columns=columns, rows=rows)
