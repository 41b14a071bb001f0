"""Validators of `Config` fields: type, range and finiteness, each failure a one-line
`ConfigError` that names the field. Used for every way a Config is made (Python, a `--config`
file, command-line flags), since all of them end in the Config constructor."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import attrs

from stratune_core.errors import ConfigError

Validator = Callable[[Any, attrs.Attribute, Any], None]


def _fail(attribute: attrs.Attribute, what: str, value: object) -> ConfigError:
    return ConfigError(f"{attribute.name}: must be {what}, got {value!r:.40}", field=attribute.name)


def _bounds(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"{'<' if high_open else '<='} {high:g}"
    return "finite"


def _in_range(value: float, low: float | None, high: float | None, low_open: bool,
              high_open: bool) -> bool:
    if low is not None and (value <= low if low_open else value < low):
        return False
    return not (high is not None and (value >= high if high_open else value > high))


def integer(low: int | None = None, high: int | None = None, *, optional: bool = False) -> Validator:
    """A whole number (not a bool, not a float) in [low, high]; None too when `optional`."""

    def check(_inst: object, attribute: attrs.Attribute, value: Any) -> None:
        if value is None and optional:
            return
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(attribute, "a whole number" + (" or null" if optional else ""), value)
        if not _in_range(value, low, high, False, False):
            bounds = "> 0" if (low, high) == (1, None) else _bounds(low, high, False, False)
            raise _fail(attribute, bounds, value)

    return check


def number(low: float | None = None, high: float | None = None, *, low_open: bool = False,
           high_open: bool = False, optional: bool = False) -> Validator:
    """A finite number within the bounds (open where asked); None too when `optional`."""

    def check(_inst: object, attribute: attrs.Attribute, value: Any) -> None:
        if value is None and optional:
            return
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _fail(attribute, "a number" + (" or null" if optional else ""), value)
        if not math.isfinite(value):
            raise _fail(attribute, "a finite number", value)
        if not _in_range(value, low, high, low_open, high_open):
            raise _fail(attribute, _bounds(low, high, low_open, high_open), value)

    return check


def to_float(value: Any) -> Any:
    """Whole numbers given for a float field become floats (1 -> 1.0); anything else is left
    for the validator to judge."""
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def flag(_inst: object, attribute: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, bool):
        raise _fail(attribute, "true or false", value)


def non_empty_text(_inst: object, attribute: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, str) or not value.strip():
        raise _fail(attribute, "a non-empty string", value)


def naming(field: str, convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`convert` as an attrs converter whose ConfigError names `field`."""

    def run(value: Any) -> Any:
        try:
            return convert(value)
        except ConfigError as exc:
            if exc.field is None:
                exc.field = field
            raise

    return run
