"""Refinement progress p_t of iterative refinement (I2)."""

from __future__ import annotations

from attrs import frozen


@frozen(kw_only=True)
class Refinement:
    """Whether I2 has started, how many steps it made, and its intermediate skill s~.

    `base_gain` is the screening gain of the draft that last became s~; a later draft must not
    fall below it to advance (the released code's ratchet), reset when s_t changes.
    """

    started: bool = False
    steps: int = 0
    intermediate_id: str | None = None
    base_gain: float | None = None
    last_scores: tuple[float, ...] = ()
    reference_score: float | None = None

    def restart(self) -> Refinement:
        return Refinement()
