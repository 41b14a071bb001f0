"""What strategy selection reads of a run, as narrow views: the recorded choices and rewards
of the history H_t and the few knobs a selector consults.

`History`, `Config` and `StrategyFloors` satisfy them, but they sit in layers above selection
(they hold selector records: a choice's source, the configured selector), so naming them here
would point an import upward (docs/design.md, Layers), even as type hints only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from stratune_core.records.enums import Strategy


class Chosen(Protocol):
    """One round's strategy choice: `OperatorChoice` in the history, `OperatorChosen` in a
    trace."""

    @property
    def round(self) -> int: ...

    @property
    def strategy(self) -> Strategy: ...


class Outcomes(Protocol):
    """What selectors read of the history: the choices made and each round's bandit reward."""

    @property
    def choices(self) -> Sequence[Chosen]: ...

    def round_reward(self, round_index: int) -> float: ...


class Floors(Protocol):
    """The strategy floors (`config.mechanisms.StrategyFloors`): budget fractions at which an
    untried I2 and I3 are forced."""

    @property
    def i2_frac(self) -> float: ...

    @property
    def i3_frac(self) -> float: ...


class SelectorKnobs(Protocol):
    """The config knobs selectors read."""

    @property
    def bandit_epsilon(self) -> float: ...

    @property
    def strategy_floors(self) -> Floors | None: ...
