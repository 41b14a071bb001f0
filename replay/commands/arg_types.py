"""Argument types shared by the subcommands: a refused value is argparse's one-line usage
error naming the flag (exit 2), before anything is read or written."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence


def at_least(low: int, high: int | None = None) -> Callable[[str], int]:
    """A whole number of at least `low` (and at most `high`, when given)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high}, got {value}")
        return value

    return parse


def directory(text: str) -> str:
    """An output directory: an empty value would put the run's files in the current
    directory."""
    if not text.strip():
        raise argparse.ArgumentTypeError("empty; give a directory (it is created if missing)")
    return text


def name(text: str) -> str:
    """A name (an MLflow experiment's): not empty, not only spaces."""
    if not text.strip():
        raise argparse.ArgumentTypeError("empty; give a name")
    return text


# what an Agent Skills folder may learn beside its body (`--skill-parts`; replay/skills/skill_parts.py)
SKILL_PART_KINDS = ("description", "references", "scripts")


def ordered_kinds(given: Sequence[str]) -> tuple[str, ...]:
    """The skill-part kinds `given`, in their fixed order; ValueError naming an unknown one."""
    for kind in given:
        if kind not in SKILL_PART_KINDS and kind != "body":
            raise ValueError(f"{kind!r}: choose from {', '.join(SKILL_PART_KINDS)} (the body is "
                             "always learnt)")
    return tuple(k for k in SKILL_PART_KINDS if k in given)


def part_kinds(text: str) -> tuple[str, ...]:
    """`--skill-parts description,references`: the kinds in their fixed order."""
    try:
        return ordered_kinds([k.strip() for k in text.split(",") if k.strip()])
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
