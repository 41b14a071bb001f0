"""Scorers for custom tasks, chosen by name. Each maps (model answer, expected) to [0, 1].

The answer first goes through `anls.extract_answer`: the text inside the last `<answer>` tags,
else the last non-empty line. `expected` is the JSON value of the task file: a string, a
number, or a list of accepted answers (the best match counts).
- exact: equal after strip, lower-case and whitespace collapsing. Binary.
- regex: `expected` is a pattern that must match the whole answer (re.fullmatch). Binary.
- choice: the A-E label found by the LiveMath parser equals `expected`. Binary.
- anls: ANLS with threshold 0.5; solved at >= 0.9. Continuous.
- numeric[:rel_tol]: the last number in the answer ("1,234.5", "$3", "12%") is within
  rel_tol (default 1e-4, absolute 1e-9 near zero) of `expected`. Binary.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from attrs import frozen

from stratune_core.records.errors import ConfigError
from stratune_core.tasks import anls
from stratune_core.tasks.livemath import parse_label

ScoreFn = Callable[[str, object], float]
_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+")


@frozen(kw_only=True)
class Scorer:
    name: str
    fn: ScoreFn
    binary: bool = True
    threshold: float = 1.0


def golds(expected: object) -> tuple[str, ...]:
    if isinstance(expected, list | tuple):
        return tuple(str(e) for e in expected)
    return (str(expected),)


def exact(text: str, expected: object) -> float:
    return 1.0 if anls.exact_match(anls.extract_answer(text), golds(expected)) else 0.0


def regex(text: str, expected: object) -> float:
    answer = anls.extract_answer(text)
    return 1.0 if any(re.fullmatch(p, answer) for p in golds(expected)) else 0.0


def choice(text: str, expected: object) -> float:
    label = parse_label(text)
    return 1.0 if label is not None and label in {g.strip().upper() for g in golds(expected)} else 0.0


def anls_score(text: str, expected: object) -> float:
    return anls.anls(anls.extract_answer(text), golds(expected))


def last_number(text: str) -> float | None:
    matches = _NUMBER.findall(text)
    if not matches:
        return None
    try:
        return float(matches[-1].replace(",", ""))
    except ValueError:
        return None


def numeric(text: str, expected: object, rel_tol: float = 1e-4) -> float:
    got = last_number(anls.extract_answer(text))
    if got is None:
        return 0.0
    for gold in golds(expected):
        want = last_number(gold)
        if want is not None and math.isclose(got, want, rel_tol=rel_tol, abs_tol=1e-9):
            return 1.0
    return 0.0


BUILTIN = ("exact", "regex", "choice", "anls", "numeric")


def builtin_scorer(spec: str) -> Scorer:
    """`exact`, `regex`, `choice`, `anls`, `numeric` or `numeric:<rel_tol>`."""
    name, _, arg = spec.partition(":")
    if name == "numeric":
        try:
            tol = float(arg) if arg else 1e-4
        except ValueError:
            raise ConfigError(f"scorer: bad tolerance in {spec!r}; use numeric:0.01") from None
        if not tol >= 0:
            raise ConfigError(f"scorer: tolerance must be >= 0 in {spec!r}")
        return Scorer(name=spec, fn=lambda t, e: numeric(t, e, tol))
    if arg:
        raise ConfigError(f"scorer: {name!r} takes no argument (got {spec!r})")
    table: dict[str, Scorer] = {
        "exact": Scorer(name="exact", fn=exact),
        "regex": Scorer(name="regex", fn=regex),
        "choice": Scorer(name="choice", fn=choice),
        "anls": Scorer(name="anls", fn=anls_score, binary=False, threshold=0.9),
    }
    if name not in table:
        raise ConfigError(
            f"scorer: unknown scorer {spec!r}; use one of {', '.join(BUILTIN)} or module:function"
        )
    return table[name]
