"""Unit tests of the budget, admission control and the execution ledger (docs/design.md,
"Budget")."""

from __future__ import annotations

import pytest

from stratune_core.budget.admission import Budget, admit
from stratune_core.budget.ledger import Ledger
from stratune_core.records.base import Execution
from stratune_core.records.errors import BudgetError, ConfigError, CoreInvariantError


def _ex(skill: str, sample: str, score: float = 1.0) -> Execution:
    return Execution(skill_id=skill, sample_id=sample, score=score, solved=score >= 1.0)


def test_remaining_and_reserve() -> None:
    """The reserve is usable only when asked for."""
    b = Budget(limit=100, spent=30, reserve=20)
    assert b.remaining == 70 and b.remaining_before_reserve == 50
    assert b.fits(50) and not b.fits(51)
    assert b.fits(70, use_reserve=True) and not b.fits(71, use_reserve=True)
    assert Budget(limit=100, spent=90, reserve=20).remaining_before_reserve == 0


def test_charge_returns_new_budget_or_raises() -> None:
    """Charging what fits adds to spent; charging more raises and leaves the budget unchanged."""
    b = Budget(limit=10, reserve=4)
    assert b.charge(6).spent == 6
    with pytest.raises(BudgetError, match="do not fit"):
        b.charge(7)
    assert b.charge(10, use_reserve=True).spent == 10
    assert b.spent == 0


def test_validators() -> None:
    """Out-of-range limit, spent, reserve and costs are refused."""
    with pytest.raises(ConfigError):
        Budget(limit=-1)
    with pytest.raises(ConfigError, match="reserve"):
        Budget(limit=10, reserve=11)
    with pytest.raises(CoreInvariantError):
        Budget(limit=10, spent=11)
    with pytest.raises(CoreInvariantError):
        Budget(limit=10).fits(-1)


def test_admit_counts_distinct_new_pairs() -> None:
    """Pairs in the ledger are free and repeats in the request count once."""
    ledger = Ledger.of([_ex("s", "x1")])
    a = admit(Budget(limit=2), ledger, [("s", "x1"), ("c", "x1"), ("c", "x1"), ("s", "x2")])
    assert a.pairs == (("c", "x1"), ("s", "x2"))
    assert a.cost == 2 and a.admitted


def test_admit_refuses_whole_group() -> None:
    """A group that does not fit before the reserve is refused entirely."""
    a = admit(Budget(limit=10, spent=5, reserve=3), Ledger(), [("c", str(i)) for i in range(3)])
    assert a.cost == 3 and not a.admitted
    assert admit(Budget(limit=10, spent=5, reserve=3), Ledger(), [("c", "0")] * 3).admitted


def test_admit_with_reserve_and_empty_group() -> None:
    """The reserve is spendable on request; an empty group is always admitted."""
    b = Budget(limit=10, spent=5, reserve=3)
    assert admit(b, Ledger(), [("c", str(i)) for i in range(5)], use_reserve=True).admitted
    assert admit(Budget(limit=0), Ledger(), []).admitted


def test_ledger_lookups() -> None:
    """Per-skill look-ups: get, has, missing (distinct, in order), solved and executed ids."""
    led = Ledger.of([_ex("s", "a"), _ex("s", "b", 0.0), _ex("c", "a", 0.5)])
    assert len(led) == 3
    assert led.get("s", "b") == _ex("s", "b", 0.0) and led.get("s", "z") is None
    assert led.has("c", "a") and not led.has("c", "b")
    assert led.missing("c", ["b", "a", "d", "b"]) == ("b", "d")
    assert led.scores("s", ["b", "a"]) == (0.0, 1.0)
    assert led.solved_ids("s") == frozenset({"a"})
    assert led.executed_ids("c") == frozenset({"a"})
    assert led.executed_ids("nobody") == frozenset()


def test_ledger_is_a_value() -> None:
    """add returns a new ledger and leaves the old one unchanged; equal contents are equal."""
    empty = Ledger(entries={})
    one = empty.add([_ex("s", "a")])
    assert len(empty) == 0 and len(one) == 1
    assert one == Ledger.of([_ex("s", "a")])
    with pytest.raises(TypeError):
        one.entries[("s", "b")] = _ex("s", "b")  # type: ignore[index]


def test_ledger_refuses_repeats_and_missing_scores() -> None:
    """A pair is executed at most once; reading an unexecuted pair names it."""
    led = Ledger.of([_ex("s", "a")])
    with pytest.raises(CoreInvariantError, match="already executed"):
        led.add([_ex("s", "a", 0.0)])
    with pytest.raises(CoreInvariantError, match="'zz'"):
        led.scores("s", ["a", "zz"])


def test_ledger_key_must_match_execution() -> None:
    """An entry stored under the wrong key is refused."""
    with pytest.raises(CoreInvariantError):
        Ledger(entries={("s", "b"): _ex("s", "a")})
