"""The strategies as the optimizer sees them (each form's description is its `FormSpec`'s,
`records/form_spec.py`), and the two form rules checked before any budget is spent (paper App. A.2): F4 keeps the answer markup the task's scorer
parses, F2 examples are copied from offered solved samples."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from attrs import frozen

from stratune_core.records.enums import Strategy

STRATEGY_DESCRIPTIONS: Mapping[Strategy, str] = MappingProxyType(
    {
        Strategy.I1: (
            "Direct Revision: revise the current skill once, choosing the form of each candidate "
            "while writing it."
        ),
        Strategy.I2: (
            "Iterative Refinement: apply one form per step to a working copy of the skill and keep "
            "refining it over several rounds before a version replaces the current skill."
        ),
        Strategy.I3: (
            "Parallel Sampling: write several independent candidates in one form and submit the "
            "best of them."
        ),
    }
)

# A format line names the answer's wrapper or shape. The heuristic: an XML-like tag (<answer>,
# </answer>, <final/>, <answer type="int">; not "x <y and z>"), an "ANSWER:" style label, or a
# format verb with the word "answer" ("Return only the final answer", "Format your answer as").
# It errs towards more lines: a line wrongly kept costs an F4 rewrite some freedom, a format
# line wrongly dropped lets a rewrite break every answer's parsing.
_TAG = re.compile(r"</?[A-Za-z][\w.-]*(?:\s+[\w.:-]+\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s<>]+))*\s*/?>")
_LABEL = re.compile(r"\banswer\s*:", re.I)
_VERB = re.compile(r"\b(?:format\w*|respond\w*|response|return\w*|repl(?:y|ies)|output\w*)\b", re.I)
_ANSWER = re.compile(r"\banswers?\b", re.I)


def _is_format_line(line: str) -> bool:
    if _TAG.search(line) or _LABEL.search(line):
        return True
    return bool(_VERB.search(line) and _ANSWER.search(line))


def format_lines(skill_text: str) -> tuple[str, ...]:
    """The stripped, non-empty lines of a skill that specify its output format (heuristic above)."""
    lines = (ln.strip() for ln in skill_text.split("\n"))
    return tuple(ln for ln in lines if ln and _is_format_line(ln))


def check_markup_kept(old_text: str, new_text: str, markup: Sequence[str]) -> str | None:
    """None if every piece of the task's answer markup that `old_text` asks for still occurs in
    `new_text`, else the first one dropped (an F4 candidate that drops it is rejected with
    FORMAT_CHANGED). Only the markup the scorer parses is held fixed: the rest of the output
    format, such as how much to say around the answer, is the optimizer's to revise."""
    for piece in markup:
        if piece in old_text and piece not in new_text:
            return piece
    return None


@frozen(kw_only=True)
class OfferedExample:
    """A solved training sample offered to the optimizer, rendered as one copyable line."""

    sample_id: str
    line: str


_BULLET = re.compile(r"^[-*]\s+")


def _content_lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.split("\n") if ln.strip()]


def _is_heading(line: str) -> bool:
    return line.startswith("#") or line.endswith(":")


def added_lines(old_text: str, new_text: str) -> tuple[str, ...]:
    """Stripped non-empty lines of `new_text` not in `old_text` (multiset difference, in the order
    of `new_text`), headings ('# ...' or '...:') left out."""
    remaining = Counter(_content_lines(old_text))
    added = []
    for line in _content_lines(new_text):
        if remaining[line] > 0:
            remaining[line] -= 1
        elif not _is_heading(line):
            added.append(line)
    return tuple(added)


def check_grounding(
    old_text: str,
    new_text: str,
    offered: Sequence[OfferedExample],
    sources: Sequence[str],
) -> tuple[str, ...] | str:
    """F2 rule: every line the candidate adds is one offered example line, copied verbatim (a
    leading list bullet '- ' or '* ' is tolerated), and it adds at least one. Returns the ids of
    the samples used, in order of first use, or an error message naming the first bad line.

    `sources` (the ids the optimizer listed) are advisory: a model may list ids it did not copy
    or forget ones it did, so the ids are derived from the matched lines instead.
    """
    del sources  # see docstring: the matched lines, not the claimed ids, decide
    by_line: dict[str, str] = {}
    for example in offered:
        by_line.setdefault(example.line.strip(), example.sample_id)
    used: list[str] = []
    added = added_lines(old_text, new_text)
    if not added:
        return "the candidate adds no example line"
    for line in added:
        sample_id = by_line.get(line)
        if sample_id is None:
            sample_id = by_line.get(_BULLET.sub("", line, count=1))
        if sample_id is None:
            shown = line if len(line) <= 100 else line[:97] + "..."
            return f"added line {shown!r} is not one of the offered solved samples"
        if sample_id not in used:
            used.append(sample_id)
    return tuple(used)
