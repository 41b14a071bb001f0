"""ANLS (Average Normalized Levenshtein Similarity) and `<answer>` extraction (DocVQA's metric).

Rules: normalise = strip, lower-case, collapse whitespace; sim = 1 - lev / max(len);
both empty -> 1, one empty -> 0; thresholded: 0 when the distance ratio is >= 0.5, else sim;
a sample's score is the max over its gold answers.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable

THRESHOLD = 0.5
_ANSWER_OPEN = re.compile(r"<answer>", re.IGNORECASE)
_ANSWER_CLOSE = re.compile(r"</answer>", re.IGNORECASE)
_WS = re.compile(r"\s+")


def normalize(text: object) -> str:
    return _WS.sub(" ", str(text).strip().lower())


def levenshtein(a: str, b: str) -> int:
    """The edit distance (insertions, deletions, substitutions, each 1), computed with Hyyrö's
    bit-parallel form of Myers' algorithm: one column of the dynamic-programming table is a pair
    of integers with a bit per character of the longer string, so the Python loop runs once per
    character of the shorter one instead of once per cell (scoring long answers against long
    golds was the largest item of a DocVQA-style replay). It gives the table's numbers exactly;
    property_tests/test_anls_props.py checks it against the table."""
    if len(a) < len(b):
        a, b = b, a
    # characters both ends share cost nothing and leave the distance as it is
    while b and a[-1] == b[-1]:
        a, b = a[:-1], b[:-1]
    start = 0
    while start < len(b) and a[start] == b[start]:
        start += 1
    a, b = a[start:], b[start:]
    if not b:
        return len(a)
    where: dict[str, int] = {}  # the bits of a's positions that hold each character
    for i, char in enumerate(a):
        where[char] = where.get(char, 0) | 1 << i
    full = (1 << len(a)) - 1
    last = 1 << (len(a) - 1)
    up, down = full, 0  # vertical deltas +1 / -1 of the current column
    distance = len(a)
    for char in b:
        match = where.get(char, 0)
        diagonal = (((match & up) + up) ^ up) | match | down
        right = down | (~(diagonal | up) & full)  # horizontal deltas +1
        left = diagonal & up  # horizontal deltas -1
        if right & last:
            distance += 1
        elif left & last:
            distance -= 1
        right = (right << 1 | 1) & full  # the first row counts up: a +1 enters at the top
        left = (left << 1) & full
        up = left | (~(diagonal | right) & full)
        down = right & diagonal
    return distance


def similarity(prediction: str, gold: str) -> float:
    """Un-thresholded similarity of normalised strings, in [0, 1]."""
    p, g = normalize(prediction), normalize(gold)
    if not p and not g:
        return 1.0
    if not p or not g:
        return 0.0
    return 1.0 - levenshtein(p, g) / max(len(p), len(g))


def anls_one(prediction: str, gold: str) -> float:
    sim = similarity(prediction, gold)
    # Distance ratio exactly at the threshold scores 0, as in the official metric.
    return 0.0 if (1.0 - sim) >= THRESHOLD else sim


def anls(prediction: str, golds: Iterable[str]) -> float:
    return max((anls_one(prediction, g) for g in golds), default=0.0)


def anls_raw(prediction: str, golds: Iterable[str]) -> float:
    return max((similarity(prediction, g) for g in golds), default=0.0)


def exact_match(prediction: str, golds: Iterable[str]) -> bool:
    p = normalize(prediction)
    return any(p == normalize(g) for g in golds)


def extract_answer(text: str) -> str:
    """Text between the last `<answer>` and the last `</answer>`; else the last non-empty line."""
    opens = list(_ANSWER_OPEN.finditer(text))
    if opens:
        start = opens[-1].end()
        closes = [m for m in _ANSWER_CLOSE.finditer(text) if m.start() >= start]
        end = closes[-1].start() if closes else len(text)
        return text[start:end].strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def gold_answers(value: object) -> tuple[str, ...]:
    """Gold answers parsed leniently: a string (maybe JSON or a Python literal), a list, a dict
    with answers/ground_truth/answer, or a list of dicts with text/answer/value."""
    if value is None:
        return ()
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("[", "{", '"', "'"):
            for parse in (json.loads, ast.literal_eval):
                try:
                    return gold_answers(parse(stripped))
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                    continue
        return (value,)
    if isinstance(value, dict):
        for key in ("answers", "ground_truth", "answer", "text", "value"):
            if key in value:
                return gold_answers(value[key])
        return ()
    if isinstance(value, list | tuple):
        out: list[str] = []
        for item in value:
            out.extend(gold_answers(item))
        return tuple(out)
    return (str(value),)
