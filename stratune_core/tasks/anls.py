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
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


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
