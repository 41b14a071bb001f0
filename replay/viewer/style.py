"""Colours and short labels shared by the viewer and the progress display."""

from __future__ import annotations

from rich.text import Text

from stratune_core.methods.event_view import short_id
from stratune_core.records.enums import Form, Strategy, Verdict

__all__ = ["short_id"]  # the viewer names a skill as every view does (`methods/event_view`)

STRATEGY_STYLE = {Strategy.I1: "cyan", Strategy.I2: "green", Strategy.I3: "magenta"}

VERDICT_STYLE = {
    Verdict.ACCEPTED: "bold green",
    Verdict.SAVED: "yellow",
    Verdict.REJECTED_SCREENING: "red",
    Verdict.REJECTED_VALIDATION: "red",
    Verdict.INVALID: "dim red",
    Verdict.UNAFFORDABLE: "dim",
    Verdict.NOT_SUBMITTED: "dim",
}
VERDICT_SHORT = {
    Verdict.ACCEPTED: "accepted",
    Verdict.SAVED: "saved",
    Verdict.REJECTED_SCREENING: "rej. screen",
    Verdict.REJECTED_VALIDATION: "rej. valid.",
    Verdict.INVALID: "invalid",
    Verdict.UNAFFORDABLE: "unaffordable",
    Verdict.NOT_SUBMITTED: "not submitted",
}


def operator_label(strategy: Strategy, form: Form | None) -> Text:
    label = strategy.value + (f"+{form.value}" if form is not None else "")
    return Text(label, style=STRATEGY_STYLE[strategy])


def verdict_text(verdict: Verdict | None) -> Text:
    if verdict is None:
        return Text("pending", style="dim")
    return Text(VERDICT_SHORT[verdict], style=VERDICT_STYLE[verdict])




def signed(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:+.{digits}f}"


def clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
