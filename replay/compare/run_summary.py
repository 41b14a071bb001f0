"""One row per run: what a reader compares first between recorded runs that differ in one
setting (the committed traces): test score before and after, accepted and saved candidates,
rounds, spent of the budget, candidates refused before evaluation, and the tokens of strategy
selection against those of the target's training calls (the share of the paper's Fig. 4)."""

from __future__ import annotations

from collections.abc import Sequence

from replay.compare.budget import spent_of, verdicts
from replay.compare.model import Column, Row, Table
from replay.compare.runs import Run, label_of
from replay.compare.tokens import SELECTION, TARGET_CALLS, TARGET_KINDS, by_kind
from stratune_core.records.enums import Reason, Verdict
from stratune_core.state.candidate_events import CandidateInvalid
from stratune_core.state.events import RoundStarted


def _invalid(run: Run) -> str:
    refused = run.of_type(CandidateInvalid)
    duplicates = sum(1 for e in refused if e.reason is Reason.DUPLICATE)
    return f"{len(refused)} ({duplicates} dup.)" if duplicates else str(len(refused))


def build(runs: Sequence[Run], by: Sequence[str] = ()) -> Table | None:
    rows = []
    for run in sorted(runs, key=lambda r: (r.pair, r.dataset, str(r.path))):
        kinds = by_kind(run)
        selection = kinds.get(SELECTION, {}).get("tokens", 0.0)
        target = sum(kinds.get(kind, {}).get("tokens", 0.0) for kind in TARGET_KINDS)
        spent, budget = spent_of(run)
        test = run.evaluation or {}
        rows.append(Row([
            run.name, label_of(run, by), test.get("n"), run.score("initial"), run.score("final"),
            verdicts(run, Verdict.ACCEPTED), verdicts(run, Verdict.SAVED),
            len(run.of_type(RoundStarted)), f"{spent}/{budget}", _invalid(run),
            selection / 1000, target / 1000,
            100.0 * selection / target if target and run.usage else None, run.check],
            group=run.pair))
    if not rows:
        return None
    columns = [Column("Run"), Column("Method"), Column("Test n", "int"),
               Column("Test before", "number", 2), Column("Test after", "number", 2),
               Column("Accepted", "int"), Column("Saved", "int"), Column("Rounds", "int"),
               Column("Spent/B"), Column("Invalid"), Column("Selection (k tok)", "number", 1),
               Column("Target (k tok)", "number", 1), Column("Selection/target (%)", "number", 1),
               Column("Check")]
    return Table(id="runs", title="Runs side by side", columns=columns, rows=rows, notes=[
        "Test before/after: the initial and the final skill on the test split (0-100; — without "
        "--test-eval); Invalid: candidates refused before any execution (dup.: a skill text "
        "the run had already seen); tokens: input + output of strategy selection and of the target's "
        f"calls during training (its {TARGET_CALLS}); Check: sealed (the files match the digests recorded when "
        "the run finished), ALTERED (they do not: `stratune replay` names the file) or "
        "unchecked (unfinished, or recorded before runs were sealed)"])
