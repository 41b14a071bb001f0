"""Refinement progress p_t of iterative refinement (I2)."""

from __future__ import annotations

import attrs
from attrs import field, frozen

from stratune_core.records.enums import Form, Strategy


@frozen(kw_only=True)
class WindowDraft:
    """A ranked I2 draft waiting in the released code's submission window (`round/i2_window.py`)."""

    candidate_id: str
    form: Form | None
    theme: str
    score: float  # on the ranking subset
    reference_score: float  # the intermediate skill's, when the draft was ranked
    exclude: frozenset[str] = field(converter=frozenset)  # kept out of its evaluation sets


@frozen(kw_only=True)
class Refinement:
    """Whether I2 has started, how many steps it made, and its intermediate skill s~.

    `base_gain` is the screening gain of the draft that last became s~; a later draft must not
    fall below it to advance (the released code's ratchet), reset when s_t changes. `window`
    holds the drafts waiting for submission under `Config.i2_window` (empty otherwise).
    """

    started: bool = False
    steps: int = 0
    intermediate_id: str | None = None
    base_gain: float | None = None
    reference_score: float | None = None
    window: tuple[WindowDraft, ...] = ()

    def restart(self) -> Refinement:
        """After an acceptance: s~ starts again from the new current skill when I2 resumes."""
        return Refinement()

    def after_acceptance(self, strategy: Strategy, *, keep: bool) -> Refinement:
        """When a candidate of `strategy` replaced s_t: refinement restarts, or (released code,
        `keep` for an I1/I3 candidate) keeps s~, its steps and window, and only restarts the
        ratchet, since the gains it holds were measured against the previous s_t."""
        if not self.started:
            return self
        if keep and strategy is not Strategy.I2:
            return attrs.evolve(self, base_gain=None)
        return self.restart()

    def stepped(self, base_id: str) -> Refinement:
        """One more I2 step, made on `base_id` (s~, or s_t when refinement starts)."""
        return attrs.evolve(self, started=True, steps=self.steps + 1, intermediate_id=base_id)

    def ranked(self, reference_score: float) -> Refinement:
        """s~'s score on the ranking subset, which the step's drafts were ranked against."""
        return attrs.evolve(self, reference_score=reference_score)

    def advances(self, gain: float, threshold: float, band: float) -> bool:
        """Whether a draft screened with `gain` (against screening threshold `threshold`)
        becomes s~: the gain must reach -max(band, 1.5 threshold), and the last advance's gain."""
        floor = -max(band, 1.5 * threshold)
        if self.base_gain is not None:
            floor = max(floor, self.base_gain)
        return gain >= floor - 1e-12

    def advanced(self, draft_id: str, gain: float | None, score: float) -> Refinement:
        """The draft becomes s~, with its screening gain as the new ratchet."""
        return attrs.evolve(self, intermediate_id=draft_id, base_gain=gain, reference_score=score)

    def waiting(self, draft: WindowDraft) -> Refinement:
        return attrs.evolve(self, window=(*self.window, draft))

    def emptied(self) -> Refinement:
        return attrs.evolve(self, window=())
