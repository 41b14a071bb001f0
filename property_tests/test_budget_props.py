"""Budget and ledger against a trivial model (docs/design.md, "Budget"): spent <= B, spent ==
distinct pairs, admission refuses exactly the groups that do not fit, and a replay spends the same."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from stratune_core.budget.admission import Budget, admit
from stratune_core.budget.ledger import Ledger
from stratune_core.records.base import Execution
from stratune_core.records.errors import BudgetError

SKILLS = ("s0", "s1", "s2")
SAMPLES = tuple(f"x{i}" for i in range(8))
pair = st.tuples(st.sampled_from(SKILLS), st.sampled_from(SAMPLES))
groups = st.lists(pair, max_size=10)


def _execute(pairs) -> list[Execution]:
    return [Execution(skill_id=s, sample_id=x, score=1.0, solved=True) for s, x in pairs]


def _apply(budget: Budget, ledger: Ledger, group, use_reserve: bool):
    """What `step` does with a group: admit it whole, then execute, record and charge."""
    admission = admit(budget, ledger, group, use_reserve=use_reserve)
    if not admission.admitted:
        return budget, ledger, admission
    return (
        budget.charge(admission.cost, use_reserve=use_reserve),
        ledger.add(_execute(admission.pairs)),
        admission,
    )


class BudgetMachine(RuleBasedStateMachine):
    @initialize(limit=st.integers(0, 30), data=st.data())
    def setup(self, limit: int, data: st.DataObject) -> None:
        self.budget = Budget(limit=limit, reserve=data.draw(st.integers(0, limit)))
        self.ledger = Ledger()
        self.model_done: set[tuple[str, str]] = set()
        self.log: list[tuple[list, bool]] = []

    @rule(group=groups, use_reserve=st.booleans())
    def request(self, group, use_reserve: bool) -> None:
        new = list(dict.fromkeys(p for p in group if p not in self.model_done))
        room = self.budget.limit - len(self.model_done)
        if not use_reserve:
            room = max(0, room - self.budget.reserve)
        fits = len(new) <= room
        if not fits:  # charging what was refused must fail rather than overspend
            with pytest.raises(BudgetError):
                self.budget.charge(len(new), use_reserve=use_reserve)
        self.budget, self.ledger, admission = _apply(self.budget, self.ledger, group, use_reserve)
        assert admission.admitted == fits
        assert list(admission.pairs) == new and admission.cost == len(new)
        if fits:
            self.model_done.update(new)
        self.log.append((group, use_reserve))

    @invariant()
    def spent_within_budget_and_equal_to_distinct_pairs(self) -> None:
        assert 0 <= self.budget.spent <= self.budget.limit
        assert self.budget.spent == len(self.ledger) == len(self.model_done)
        assert set(self.ledger.entries) == self.model_done

    def teardown(self) -> None:
        """Replaying the recorded requests from scratch ends in the same budget and ledger."""
        if not hasattr(self, "log"):
            return
        budget, ledger = Budget(limit=self.budget.limit, reserve=self.budget.reserve), Ledger()
        for group, use_reserve in self.log:
            budget, ledger, _ = _apply(budget, ledger, group, use_reserve)
        assert budget == self.budget and ledger == self.ledger


TestBudgetMachine = BudgetMachine.TestCase
TestBudgetMachine.settings = settings(stateful_step_count=30)


@given(st.integers(0, 40), st.lists(st.tuples(groups, st.booleans()), max_size=20))
def test_any_request_sequence_stays_within_budget(limit: int, requests) -> None:
    """Whatever groups are requested, spent never exceeds B and counts each pair once."""
    budget, ledger = Budget(limit=limit), Ledger()
    executed: set[tuple[str, str]] = set()
    for group, use_reserve in requests:
        budget, ledger, admission = _apply(budget, ledger, group, use_reserve)
        if admission.admitted:
            executed.update(admission.pairs)
        assert budget.spent <= limit
    assert budget.spent == len(executed) == len(ledger)
