"""The evaluation history H_t as the selection prompt shows it (paper Fig. 5, §3.2).

Totals per strategy and per form, and the attempts themselves, each with the form, the decision,
the screening gain, W/L, D/U, the validation gain and whether the screening gain held: what
happened, never why the selection chose it. A selection's earlier reason shown in every later
prompt is copied back by a weak selector as the reason for the same choice, whatever the
outcomes say (the selection's "why" stays in the events, `StrategyChosen`).

- Paper: every attempt, newest first, in the strategy history; in the form history the attempts
  grouped by the form the selection chose (a form I1 picks while writing is kept apart, in its
  own totals). A prompt over its token budget drops the oldest rows first and says how many.
- Released code ("past revisions"): per strategy its latest accepted-or-saved candidate and its
  latest failure, oldest first, and totals per form.
"""

from __future__ import annotations

from collections.abc import Sequence

from stratune_core.records.enums import Form, Strategy, Verdict
from stratune_core.state.history import History, HistoryEntry

RECENT_RESULTS = 3  # outcomes repeated in the feedback block
THEME_CHARS = 60

_VERDICT_TEXT = {
    Verdict.ACCEPTED: "accepted",
    Verdict.SAVED: "saved for final selection (gain below the screening threshold)",
    Verdict.REJECTED_SCREENING: "rejected in screening",
    Verdict.REJECTED_VALIDATION: "rejected in validation",
    Verdict.INVALID: "invalid before evaluation",
    Verdict.UNAFFORDABLE: "not evaluated (budget)",
    Verdict.NOT_SUBMITTED: "not submitted (lost the ranking)",
}


def _gain(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def totals(entries: Sequence[HistoryEntry]) -> str:
    if not entries:
        return "no attempts yet"
    accepted = sum(e.verdict is Verdict.ACCEPTED for e in entries)
    saved = sum(e.verdict is Verdict.SAVED for e in entries)
    invalid = sum(e.verdict is Verdict.INVALID for e in entries)
    gains = [e.screen_gain for e in entries if e.screen_gain is not None]
    regress = [e.regressions for e in entries if e.regressions is not None]
    held = [e.held for e in entries if e.held is not None]
    mean_gain = sum(gains) / len(gains) if gains else None
    parts = [
        f"{len(entries)} candidate{'s' if len(entries) != 1 else ''}, {accepted} accepted, "
        f"{saved} saved, {invalid} invalid",
        f"mean screening gain {_gain(mean_gain)}",
        f"regressions {sum(regress)}" if regress else "regressions n/a",
    ]
    if held:
        parts.append(f"screening gain held in validation {sum(held)}/{len(held)}")
    return "; ".join(parts)


def strategy_totals(history: History) -> str:
    return "\n".join(f"- {s.value}: {totals(history.by_strategy(s))}" for s in Strategy)


def form_totals(history: History) -> str:
    return "\n".join(f"- {f.value}: {totals(history.by_form(f))}" for f in Form)


def form_selected(entry: HistoryEntry, history: History) -> bool:
    """Was the entry's form chosen with its strategy (by the selection, a rule or a fixed
    operator), rather than by the optimizer while writing an I1 candidate?"""
    choice = history.choice_in(entry.round)
    return choice is not None and choice.form is not None


def split_form_totals(history: History) -> str:
    """Totals per form that has attempts, the forms chosen with the strategy apart from those
    chosen while writing (I1)."""
    lines = []
    for heading, selected in (("Forms chosen with the strategy:", True),
                              ("Forms chosen while writing the candidate (I1):", False)):
        group = [e for e in history.entries if form_selected(e, history) is selected]
        lines.append(heading)
        lines += [f"- {f.value}: {totals(of_form)}" for f in Form
                  if (of_form := [e for e in group if e.form is f])] or ["- no attempts yet"]
    return "\n".join(lines)


def attempt_rows(history: History) -> tuple[str, ...]:
    """Every attempt, newest first."""
    return tuple(describe_entry(e) for e in reversed(history.entries))


def form_rows(history: History) -> tuple[str, ...]:
    """The attempts whose form was chosen with the strategy, by form, newest first in each."""
    selected = [e for e in reversed(history.entries) if form_selected(e, history)]
    return tuple(describe_entry(e, label=f"{form.value}: ")
                 for form in Form for e in selected if e.form is form)


def _success(entry: HistoryEntry) -> bool:
    return entry.verdict in (Verdict.ACCEPTED, Verdict.SAVED)


def recent_cases(history: History) -> tuple[HistoryEntry, ...]:
    """For each strategy its latest success and latest failure, in history order."""
    chosen: list[int] = []
    for strategy in Strategy:
        indices = [i for i, e in enumerate(history.entries) if e.strategy is strategy]
        for wanted in (True, False):
            latest = next((i for i in reversed(indices) if _success(history.entries[i]) is wanted),
                          None)
            if latest is not None:
                chosen.append(latest)
    return tuple(history.entries[i] for i in sorted(chosen))


def describe_entry(entry: HistoryEntry, *, label: str = "") -> str:
    """One row: round, operator, theme, decision (with the failed checks), screening gain with
    W/L and D/U, validation gain and whether it held; `label` leads the row (the form of a
    form-history row)."""
    form = f"+{entry.form.value}" if entry.form is not None else ""
    theme = f" “{_clip(entry.theme, THEME_CHARS)}”" if entry.theme else ""
    decision = _VERDICT_TEXT[entry.verdict]
    if entry.reasons and entry.verdict is not Verdict.UNAFFORDABLE:
        decision += f" ({', '.join(r.value for r in entry.reasons)})"
    parts = [f"round {entry.round + 1} {entry.strategy.value}{form}{theme}: {decision}"]
    if entry.screen_gain is not None:
        parts.append(
            f"screening gain {_gain(entry.screen_gain)} (W/L {entry.screen_wins}/"
            f"{entry.screen_losses}, D/U {entry.regressions}/{entry.improvements})"
        )
    if entry.val_gain is not None:
        held = "held" if entry.held else "did not hold"
        parts.append(f"validation gain {_gain(entry.val_gain)} ({held})")
    return "- " + label + "; ".join(parts)


def case_rows(history: History) -> tuple[str, ...]:
    return tuple(describe_entry(e) for e in recent_cases(history))


def recent_results(history: History) -> tuple[str, ...]:
    """The last few candidate outcomes, newest last."""
    return tuple(describe_entry(e) for e in history.entries[-RECENT_RESULTS:])
