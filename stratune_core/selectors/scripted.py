"""Selectors that follow a script from round 0 on and never ask the optimizer (paper §4.1):
one fixed strategy, a uniform random one, a rotation, or another run's recorded sequence."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TYPE_CHECKING, ClassVar, Self

from attrs import field, frozen

from stratune_core.enums import Strategy
from stratune_core.errors import ConfigError
from stratune_core.selectors.base import Pick, Selector, SelectorContext, enum_argument

if TYPE_CHECKING:
    from stratune_core.events import OperatorChosen

ORDER: tuple[Strategy, ...] = tuple(Strategy)  # I1, I2, I3


@frozen(kw_only=True)
class Fixed(Selector):
    """The same strategy every round, the first included."""

    name: ClassVar[str] = "fixed"
    usage: ClassVar[str] = "fixed:I1|I2|I3"
    strategy: Strategy

    @classmethod
    def parse(cls, argument: str | None) -> Self:
        return cls(strategy=enum_argument(cls, Strategy, argument))

    def argument(self) -> str:
        return self.strategy.value

    @classmethod
    def examples(cls) -> tuple[Selector, ...]:
        return tuple(cls(strategy=s) for s in Strategy)

    def choose(self, context: SelectorContext, memory: Hashable) -> Pick:
        return Pick(strategy=self.strategy, source=self)


@frozen(kw_only=True)
class RandomChoice(Selector):
    """A uniform draw from the round's randomness."""

    name: ClassVar[str] = "random"
    usage: ClassVar[str] = "random"

    def choose(self, context: SelectorContext, memory: Hashable) -> Pick:
        return Pick(strategy=ORDER[int(context.rng.integers(len(ORDER)))], source=self)


@frozen(kw_only=True)
class Rotation(Selector):
    """I1, I2, I3, I1, ... by round index."""

    name: ClassVar[str] = "rotation"
    usage: ClassVar[str] = "rotation"

    def choose(self, context: SelectorContext, memory: Hashable) -> Pick:
        return Pick(strategy=ORDER[context.round % len(ORDER)], source=self)


def recorded_strategies(chosen: Iterable[OperatorChosen]) -> tuple[Strategy, ...]:
    """The strategy sequence a `replay:` selector follows, from a recorded run's choices.

    Today: the choices in order (skipped rounds have none), replayed cyclically by
    `ReplaySequence.choose`. These two functions are the whole of the replay rule.
    """
    return tuple(e.strategy for e in chosen)


@frozen(kw_only=True)
class ReplaySequence(Selector):
    """Another run's strategy sequence (`replay:<run dir>`), in a new run (another seed).

    `strategies` is read from the trace by the shell (`recorded_strategies`); the spelling keeps
    only the trace, and the manifest stores the sequence beside the config.
    """

    name: ClassVar[str] = "replay"
    usage: ClassVar[str] = "replay:<run dir>"
    trace: str = field()
    strategies: tuple[Strategy, ...] = field(default=(), converter=tuple)

    @trace.validator
    def _trace_named(self, _attribute: object, value: str) -> None:
        if not isinstance(value, str) or not value:
            raise ConfigError(f"selector: replay needs a run directory; use {self.usage}")

    @classmethod
    def parse(cls, argument: str | None) -> Self:
        return cls(trace=argument or "")

    def argument(self) -> str:
        return self.trace

    @classmethod
    def examples(cls) -> tuple[Selector, ...]:
        return (cls(trace="runs/other", strategies=(Strategy.I2, Strategy.I1)),)

    def check_ready(self) -> None:
        if not self.strategies:
            raise ConfigError(
                f"selector: '{self}' needs the recorded strategy sequence, which is empty; "
                "check that the trace records at least one round"
            )

    def choose(self, context: SelectorContext, memory: Hashable) -> Pick:
        self.check_ready()
        return Pick(strategy=self.strategies[context.round % len(self.strategies)], source=self)
