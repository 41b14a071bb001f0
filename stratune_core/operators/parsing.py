"""Reading the optimizer's JSON replies (the strategy-selection call, paper App. A.3).

Models wrap JSON in prose, code fences or reasoning that itself contains braces, so the reply is
scanned for balanced objects (string- and escape-aware) instead of matched with a greedy regex,
which would glue two objects, or an object and a brace in the prose, together.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator, Sequence

from attrs import frozen

from stratune_core.records.enums import Form, Strategy
from stratune_core.records.form_spec import form_of_code

WHY_LIMIT = 300

_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def _match_braces(text: str, start: int) -> dict[int, int | None]:
    """Scan from the `{` at `start` until it closes. For every `{` met outside a string, where its
    object ends (index past the `}`), or None if it never closes. A `{` met outside a string here
    would get exactly this answer from a scan of its own, so callers cache it: that keeps the
    search linear on replies full of unbalanced braces (LaTeX, code)."""
    ends: dict[int, int | None] = {}
    stack: list[int] = []
    in_string = False
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            stack.append(i)
        elif ch == "}":
            ends[stack.pop()] = i + 1
            if not stack:
                return ends
    ends.update(dict.fromkeys(stack))
    return ends


def _loads(candidate: str) -> dict | None:
    """JSON, forgiving raw newlines in strings and trailing commas; failing that, a Python dict
    literal (single quotes), which small models write often. literal_eval evaluates no code."""
    for attempt in (candidate, _TRAILING_COMMA.sub(r"\1", candidate)):
        try:
            value = json.loads(attempt, strict=False)
        except ValueError:
            continue
        return value if isinstance(value, dict) else None
    try:
        value = ast.literal_eval(candidate)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _objects(text: str) -> Iterator[dict]:
    """Top-level objects left to right. After a parsed object the scan resumes past its end (its
    inner objects are not top-level); after a balanced span that does not parse it resumes one
    character later, so a valid object nested in malformed text is still found."""
    ends: dict[int, int | None] = {}
    i = text.find("{")
    while i != -1:
        if i not in ends:
            ends.update(_match_braces(text, i))
        end = ends[i]
        value = _loads(text[i:end]) if end is not None else None
        if value is not None and end is not None:
            yield value
            i = text.find("{", end)
        else:
            i = text.find("{", i + 1)


def extract_json_object(text: str) -> dict | None:
    """The last top-level JSON object in `text` (fenced or not), or None if none parses.
    Forgiven: a trailing comma, a raw newline inside a string, Python-style single quotes."""
    last = None
    for obj in _objects(text):
        last = obj
    return last


@frozen(kw_only=True)
class SelectionReply:
    strategy: Strategy
    form: Form | None
    why: str


def _label(value: object) -> str:
    return value.strip().upper() if isinstance(value, str) else ""


def parse_selection(
    text: str, *, allowed: Sequence[Strategy], forms: Sequence[Form]
) -> SelectionReply | None:
    """The reply `{"strategy": "I1|I2|I3", "form": "F1..F4"|null, "why": "..."}`.

    Labels must be exact after `strip().upper()` ("i2" is I2; "2" or "I2 (refine)" are not), so a
    sloppy reply is repaired by the caller rather than guessed here. A strategy that is unknown or
    not in `allowed` makes the reply unusable (None). A form that is absent, null, unknown or not
    in `forms` becomes None: the caller decides what a missing form means for the strategy.
    """
    data = extract_json_object(text)
    if data is None:
        return None
    data = {str(k).strip().lower(): v for k, v in data.items()}
    label = _label(data.get("strategy"))
    strategy = Strategy.__members__.get(label)
    if strategy is None or strategy not in allowed:
        return None
    form = form_of_code(_label(data.get("form")))
    if form is not None and form not in forms:
        form = None
    why = data.get("why", "")
    why = why if isinstance(why, str) else ("" if why is None else json.dumps(why))
    return SelectionReply(strategy=strategy, form=form, why=why.strip()[:WHY_LIMIT])
