"""The execution budget B and admission control (docs/design.md, "Budget").

Spending is logical: one unit per new (skill, sample) pair, whether or not the model call was
served by a cache, so a replay spends exactly what the recorded run spent. A group of
executions is admitted whole or not at all, so `spent <= limit` always holds.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs
from attrs import field, frozen

from stratune_core.budget.ledger import Ledger
from stratune_core.records.errors import BudgetError, ConfigError, CoreInvariantError


def _limit_ok(_inst: object, _attr: attrs.Attribute, value: int) -> None:
    if value < 0:
        raise ConfigError(f"budget: must be >= 0 executions, got {value}")


@frozen(kw_only=True)
class Budget:
    """`limit` = B; `reserve` is held back for final skill selection."""

    limit: int = field(validator=_limit_ok)
    spent: int = field(default=0)
    reserve: int = field(default=0)

    @spent.validator
    def _spent_ok(self, _attr: attrs.Attribute, value: int) -> None:
        if not 0 <= value <= self.limit:
            raise CoreInvariantError(f"budget: spent={value} outside [0, limit={self.limit}]")

    @reserve.validator
    def _reserve_ok(self, _attr: attrs.Attribute, value: int) -> None:
        if not 0 <= value <= self.limit:
            raise ConfigError(
                f"reserve: {value} executions is outside [0, budget={self.limit}]; "
                "lower `reserve` or raise `budget`"
            )

    @property
    def remaining(self) -> int:
        return self.limit - self.spent

    @property
    def remaining_before_reserve(self) -> int:
        return max(0, self.limit - self.reserve - self.spent)

    def fits(self, n: int, *, use_reserve: bool = False) -> bool:
        if n < 0:
            raise CoreInvariantError(f"budget: a cost cannot be negative, got {n}")
        return n <= (self.remaining if use_reserve else self.remaining_before_reserve)

    def charge(self, n: int, *, use_reserve: bool = False) -> Budget:
        if not self.fits(n, use_reserve=use_reserve):
            room = self.remaining if use_reserve else self.remaining_before_reserve
            raise BudgetError(
                f"budget: {n} executions do not fit in the {room} left "
                f"(limit {self.limit}, spent {self.spent}, reserve {self.reserve}"
                f"{', usable' if use_reserve else ', held back'})"
            )
        return attrs.evolve(self, spent=self.spent + n)


@frozen(kw_only=True)
class Admission:
    """The new pairs a group needs, what they cost, and whether the group may start."""

    pairs: tuple[tuple[str, str], ...] = field(converter=tuple)
    cost: int
    admitted: bool


def admit(
    budget: Budget,
    ledger: Ledger,
    pairs: Iterable[tuple[str, str]],
    *,
    use_reserve: bool = False,
) -> Admission:
    """Admit the whole group iff its distinct new pairs fit; pairs in the ledger are free."""
    new = tuple(dict.fromkeys(p for p in pairs if not ledger.has(*p)))
    return Admission(
        pairs=new, cost=len(new), admitted=budget.fits(len(new), use_reserve=use_reserve)
    )
