"""Fig. 3a: the operator chosen in each round of each run (✓: the round accepted a
candidate), with the share of rounds per strategy and per revision form."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from replay.compare.model import Column, Row, Table
from replay.compare.runs import Run, label_of
from stratune_core.records.enums import Verdict
from stratune_core.records.form_spec import FORM_SPECS
from stratune_core.state.candidate_events import CandidateDecided
from stratune_core.state.events import OperatorChosen

STRATEGIES = ("I1", "I2", "I3")
FORMS = tuple(s.code for s in FORM_SPECS)


def sequence_of(run: Run) -> tuple[list[str], Counter[str], Counter[str]]:
    accepted = {e.round for e in run.of_type(CandidateDecided) if e.verdict is Verdict.ACCEPTED}
    steps: list[str] = []
    strategies: Counter[str] = Counter()
    forms: Counter[str] = Counter()
    for chosen in run.of_type(OperatorChosen):
        strategy, form = chosen.strategy.value, chosen.form.value if chosen.form else None
        strategies[strategy] += 1
        if form is not None:
            forms[form] += 1
        steps.append(strategy + (form or "") + ("✓" if chosen.round in accepted else ""))
    return steps, strategies, forms


def build(runs: Sequence[Run], by: Sequence[str] = ()) -> Table | None:
    rows = []
    for run in sorted(runs, key=lambda r: (r.pair, r.dataset, label_of(r, by),
                                          r.record.seed, str(r.path))):
        steps, strategies, forms = sequence_of(run)
        n_strategies, n_forms = sum(strategies.values()), sum(forms.values())
        rows.append(Row([run.name, run.dataset, label_of(run, by), run.record.seed,
                         len(steps), " ".join(steps),
                         *(100.0 * strategies[s] / n_strategies if n_strategies else None
                           for s in STRATEGIES),
                         *(100.0 * forms[f] / n_forms if n_forms else None for f in FORMS)],
                        group=run.pair))
    if not rows:
        return None
    columns = [Column("Run"), Column("Dataset"), Column("Method"), Column("Seed", "int"),
               Column("Rounds", "int"), Column("Operators per round"),
               *(Column(f"{s} (%)", "percent", 0) for s in STRATEGIES),
               *(Column(f"{f} (%)", "percent", 0) for f in FORMS)]
    return Table(id="sequences", title="Operator sequences per run (Fig. 3a)", columns=columns,
                 rows=rows, notes=["strategy shares over rounds with an operator; form shares "
                                   "over rounds with a form (the first I1 round has none)"])
