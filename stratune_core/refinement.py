"""Refinement progress p_t of iterative refinement (I2)."""

from __future__ import annotations

import attrs
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
        """After an acceptance: s~ starts again from the new current skill when I2 resumes."""
        return Refinement()

    def stepped(self, base_id: str) -> Refinement:
        """One more I2 step, made on `base_id` (s~, or s_t when refinement starts)."""
        return attrs.evolve(self, started=True, steps=self.steps + 1, intermediate_id=base_id)

    def ranked(self, scores: tuple[float, ...], reference_score: float) -> Refinement:
        """The step's drafts and s~ scored on the ranking subset."""
        return attrs.evolve(self, last_scores=scores, reference_score=reference_score)

    def advanced(self, draft_id: str, gain: float | None, score: float) -> Refinement:
        """The draft becomes s~, with its screening gain as the new ratchet."""
        return attrs.evolve(self, intermediate_id=draft_id, base_gain=gain, reference_score=score)
