"""Evaluation history H_t: every candidate outcome, with views by strategy and by form."""

from __future__ import annotations

from attrs import field, frozen

from stratune_core.records.enums import Form, Reason, Strategy, Verdict
from stratune_core.selection.selectors.adaptive import LLMSelector
from stratune_core.selection.selectors.base import Source


@frozen(kw_only=True)
class OperatorChoice:
    """The operator chosen for one round and why (shown by the viewer, read by bandits)."""

    round: int
    strategy: Strategy
    form: Form | None
    why: str = ""
    source: Source = LLMSelector()  # the configured selector, or the rule that overrode it
    fallback: bool = False  # the optimizer's reply was unusable: I1, or the first form offered


@frozen(kw_only=True)
class HistoryEntry:
    """The outcome of one candidate (rejections and invalid patches included)."""

    round: int
    strategy: Strategy
    form: Form | None
    candidate_id: str
    verdict: Verdict
    theme: str = ""
    reasons: tuple[Reason, ...] = field(default=(), converter=tuple)
    screen_gain: float | None = None
    screen_wins: int | None = None
    screen_losses: int | None = None
    regressions: int | None = None  # D on the screening set
    improvements: int | None = None  # U on the screening set
    val_gain: float | None = None
    held: bool | None = None  # did the screening gain hold up in validation?

    @property
    def accepted(self) -> bool:
        return self.verdict is Verdict.ACCEPTED

    @property
    def saved(self) -> bool:
        return self.verdict is Verdict.SAVED


@frozen(kw_only=True)
class History:
    entries: tuple[HistoryEntry, ...] = ()
    choices: tuple[OperatorChoice, ...] = ()

    def add_entry(self, entry: HistoryEntry) -> History:
        return History(entries=(*self.entries, entry), choices=self.choices)

    def add_choice(self, choice: OperatorChoice) -> History:
        return History(entries=self.entries, choices=(*self.choices, choice))

    def by_strategy(self, strategy: Strategy) -> tuple[HistoryEntry, ...]:
        return tuple(e for e in self.entries if e.strategy is strategy)

    def by_form(self, form: Form) -> tuple[HistoryEntry, ...]:
        return tuple(e for e in self.entries if e.form is form)

    def choice_in(self, round_index: int) -> OperatorChoice | None:
        return next((c for c in reversed(self.choices) if c.round == round_index), None)

    def in_round(self, round_index: int) -> tuple[HistoryEntry, ...]:
        return tuple(e for e in self.entries if e.round == round_index)

    def round_reward(self, round_index: int) -> float:
        """Bandit reward of a round: 1 if a candidate was accepted, 0.5 if one was saved, else 0."""
        entries = self.in_round(round_index)
        if any(e.accepted for e in entries):
            return 1.0
        if any(e.saved for e in entries):
            return 0.5
        return 0.0
