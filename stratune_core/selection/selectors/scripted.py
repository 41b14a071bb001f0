"""Selectors that follow a script from round 0 on and never ask the optimizer (paper §4.1):
one fixed strategy, a uniform random one, a rotation, or another run's recorded sequence
(aligned by round)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import ClassVar, Self

from attrs import field, frozen

from stratune_core.records.enums import ChoiceRule, Strategy
from stratune_core.records.errors import ConfigError
from stratune_core.selection.outcomes import Chosen
from stratune_core.selection.selectors.base import Pick, Selector, SelectorContext, enum_argument

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


def recorded_strategies(
    rounds: int, chosen: Iterable[Chosen]
) -> tuple[Strategy | None, ...]:
    """The strategy sequence a `replay:` selector follows, aligned by round: entry r is the
    strategy the recorded run used in its round r, None for a round it ran without choosing one
    (no failures on its batch, or a fixed F2 operator without material). `rounds` is the number
    of rounds the recorded run started; the sequence covers every choice even past it."""
    by_round = {e.round: e.strategy for e in chosen}
    length = max([rounds, *(r + 1 for r in by_round)])
    return tuple(by_round.get(r) for r in range(length))


@frozen(kw_only=True)
class ReplaySequence(Selector):
    """Another run's strategy sequence (`replay:<run dir>`), in a new run (another seed), round
    by round (paper §4.1: "follows round by round the strategy sequence recorded"): round r uses
    the strategy recorded at round r.

    Where the recording has no strategy for round r (the recorded run skipped it, or the new
    run outlives the recording) the round uses I1, the method's own rule where there is nothing
    to choose from (the first round, and the fallback for an unusable selection reply), with
    the source `not-recorded`. It never asks the optimizer: that would bring back the per-round
    decision the ablation removes. Cycling the sequence (the old behaviour) or carrying the
    last strategy forward would invent decisions the recorded run never took at that round.

    `strategies` is read from the trace by the shell (`recorded_strategies`); the spelling keeps
    only the trace, and the manifest stores the sequence beside the config.
    """

    name: ClassVar[str] = "replay"
    usage: ClassVar[str] = "replay:<run dir>"
    trace: str = field()
    strategies: tuple[Strategy | None, ...] = field(default=(), converter=tuple)

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
        return (cls(trace="runs/other", strategies=(Strategy.I1, None, Strategy.I3, Strategy.I2)),)

    def check_ready(self) -> None:
        if not any(s is not None for s in self.strategies):
            raise ConfigError(
                f"selector: '{self}' needs the recorded strategy sequence, which is empty; "
                "check that the trace records at least one round"
            )

    def choose(self, context: SelectorContext, memory: Hashable) -> Pick:
        self.check_ready()
        r = context.round
        recorded = self.strategies[r] if r < len(self.strategies) else None
        if recorded is None:
            return Pick(strategy=Strategy.I1, source=ChoiceRule.NOT_RECORDED)
        return Pick(strategy=recorded, source=self)
