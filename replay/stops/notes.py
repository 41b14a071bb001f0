"""What to do about a run's stop reason, where the reason alone does not say it."""

from __future__ import annotations

from stratune_core.records.enums import StopReason
from stratune_core.round.registry import METHODS

_GENERAL = {
    StopReason.NO_USABLE_CANDIDATES: (
        "the optimizer wrote no usable candidate for max_unusable_rounds rounds in a row (its "
        "replies did not parse, or its patches did not apply): use a stronger optimizer model, "
        "or give its repair turn more room (optimizer_max_tokens, prompt_tokens in --config); "
        "max_unusable_rounds null never stops for this"),
}


def _notes() -> dict[StopReason, str]:
    """The general note of each reason, then each method's own cause of it, from its entry
    ("Under --method <name>: <note>")."""
    parts = {reason: [note] for reason, note in _GENERAL.items()}
    for entry in METHODS.values():
        for reason, note in entry.stop_notes:
            parts.setdefault(reason, []).append(f"Under --method {entry.method.value}: {note}")
    return {reason: ". ".join(texts) for reason, texts in parts.items()}


NOTES = _notes()


def stop_note(reason: StopReason) -> str | None:
    return NOTES.get(reason)
