"""Selectors that look at the run: the optimizer LLM (the method), `once` (the LLM's first free
choice, kept), and the bandits over recorded outcomes (paper App. C.2)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import ClassVar, Self

from attrs import frozen

from stratune_core.records.enums import ChoiceRule, Strategy
from stratune_core.selection.bandits import BanditKind, choose_bandit
from stratune_core.selection.selectors.base import Pick, Selector, SelectorContext, enum_argument
from stratune_core.selection.strategy_floors import floor_strategy


@frozen(kw_only=True)
class LLMSelector(Selector):
    """The method: the optimizer LLM chooses from the optimization state.

    The released code's strategy floors apply to this selector only: an ablation selector is
    the thing under study and must not be overridden.
    """

    name: ClassVar[str] = "llm"
    usage: ClassVar[str] = "llm"

    def choose(self, context: SelectorContext, memory: Hashable) -> Pick | None:
        floor = floor_strategy(context)
        return None if floor is None else Pick(strategy=floor, source=ChoiceRule.STRATEGY_FLOOR)


@frozen(kw_only=True)
class Once(Selector):
    """The optimizer LLM chooses once, at its first free decision; later rounds keep that."""

    name: ClassVar[str] = "once"
    usage: ClassVar[str] = "once"

    def choose(self, context: SelectorContext, memory: Hashable) -> Pick | None:
        return None if memory is None else Pick(strategy=memory, source=self)  # type: ignore[arg-type]

    def remember(self, memory: Hashable, strategy: Strategy) -> Hashable:
        return strategy if memory is None else memory


@frozen(kw_only=True)
class Bandit(Selector):
    """A bandit over I1-I3 with the round reward of `History.round_reward`."""

    name: ClassVar[str] = "bandit"
    usage: ClassVar[str] = "bandit:" + "|".join(k.value for k in BanditKind)
    kind: BanditKind

    @classmethod
    def parse(cls, argument: str | None) -> Self:
        return cls(kind=enum_argument(cls, BanditKind, argument))

    def argument(self) -> str:
        return self.kind.value

    @classmethod
    def examples(cls) -> tuple[Selector, ...]:
        return tuple(cls(kind=k) for k in BanditKind)

    def choose(self, context: SelectorContext, memory: Hashable) -> Pick:
        strategy = choose_bandit(
            self.kind, history=context.history, rng=context.rng,
            epsilon=context.config.bandit_epsilon,
        )
        return Pick(strategy=strategy, source=self)
