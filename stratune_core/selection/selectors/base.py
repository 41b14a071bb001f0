"""What a strategy selector is: a frozen record that picks a round's search strategy, or leaves
the pick to the optimizer LLM.

A selector is spelt `name` or `name:argument` on the command line and in the manifest
(`llm`, `fixed:I1`, `bandit:ucb1`, `replay:runs/a`); `registry.parse_selector` reads a spelling
and `str(selector)` writes it back. A selector that remembers something between rounds keeps it
in its own frozen memory (`State.selector_memory`), never in fields of the core `State`.
"""

from __future__ import annotations

import enum
from collections.abc import Hashable
from typing import TYPE_CHECKING, ClassVar, Self, TypeVar

from attrs import frozen

from stratune_core.records.enums import ChoiceRule, Strategy
from stratune_core.records.errors import ConfigError
from stratune_core.selection.outcomes import Outcomes, SelectorKnobs

if TYPE_CHECKING:
    import numpy as np

    from stratune_core.budget.admission import Budget


@frozen(kw_only=True)
class SelectorContext:
    """What a selector may look at: the run so far and the round's randomness."""

    round: int
    history: Outcomes  # a `History`
    budget: Budget
    config: SelectorKnobs  # a `Config`
    rng: np.random.Generator
    first_round: int = 0  # the round the first-round rule applies to (after a warm-up)
    offered: tuple[Strategy, ...] = tuple(Strategy)  # the affordability guards' menu


class Selector:
    """Base of the selector records; `registry.SELECTORS` lists the concrete ones.

    A subclass is a frozen attrs class that sets `name` (the head of its spelling) and `usage`
    (its spellings, for help texts) and implements `choose`. One that takes an argument after
    the colon overrides `parse`, `argument` and `examples`; one that remembers its own past
    choices overrides `remember`.
    """

    name: ClassVar[str]
    usage: ClassVar[str]

    @classmethod
    def parse(cls, argument: str | None) -> Self:
        """The record for the text after the colon (None: there was no colon)."""
        if argument is not None:
            raise ConfigError(f"selector: {cls.name!r} takes no argument; use {cls.usage}")
        return cls()

    def argument(self) -> str | None:
        return None

    @classmethod
    def examples(cls) -> tuple[Selector, ...]:
        """One record per spelling (all of them where they are few): for help texts and tests."""
        return (cls.parse(None),)

    def __str__(self) -> str:
        argument = self.argument()
        return self.name if argument is None else f"{self.name}:{argument}"

    def choose(self, context: SelectorContext, memory: Hashable) -> Pick | None:
        """The round's strategy, or None to let the optimizer LLM choose."""
        raise NotImplementedError

    def remember(self, memory: Hashable, strategy: Strategy) -> Hashable:
        """The memory after the optimizer LLM chose `strategy` in a round this selector left to
        it. Selectors that keep nothing return None."""
        return memory

    def check_ready(self) -> None:
        """Raise a `ConfigError` if the selector cannot run as configured (before any spend)."""


Source = Selector | ChoiceRule  # who decided a round's operator

E = TypeVar("E", bound=enum.Enum)


def enum_argument(cls: type[Selector], members: type[E], argument: str | None) -> E:
    """A selector's argument that names a member of `members` (`I2` in `fixed:I2`)."""
    try:
        return members(argument)
    except ValueError:
        spelt = cls.name if argument is None else f"{cls.name}:{argument}"
        raise ConfigError(f"selector: {spelt!r} is not one of {cls.usage}") from None


@frozen(kw_only=True)
class Pick:
    """A strategy and who picked it: the selector itself or a rule it applies."""

    strategy: Strategy
    source: Source
