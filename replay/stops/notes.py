"""What to do about a run's stop reason, where the reason alone does not say it."""

from __future__ import annotations

from stratune_core.records.enums import StopReason

NOTES = {
    StopReason.NO_USABLE_CANDIDATES: (
        "the optimizer wrote no usable candidate for max_unusable_rounds rounds in a row (its "
        "replies did not parse, or its patches did not apply): use a stronger optimizer model, "
        "or give its repair turn more room (optimizer_max_tokens, prompt_tokens in --config); "
        "max_unusable_rounds null never stops for this. Under --method textgrad: an update "
        "reply had no opening tag, which ends the run as TextGrad's released optimizer does "
        "(a stronger optimizer model)"),
}


def stop_note(reason: StopReason) -> str | None:
    return NOTES.get(reason)
