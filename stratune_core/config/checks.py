"""Validators of `Config` fields: type, range and finiteness, each failure a one-line
`ConfigError` that names the field. Used for every way a Config is made (Python, a `--config`
file, command-line flags), since all of them end in the Config constructor."""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from typing import Any

import attrs
from attrs import field, frozen

from stratune_core.records.errors import ConfigError

Validator = Callable[[Any, attrs.Attribute, Any], None]


def key_of(attribute: attrs.Attribute) -> str:
    """The name a field is spelt with in a config file: a mechanism's parameter keeps its flat
    key (`i2_window_drafts` for `I2Window.drafts`), the spelling older manifests carry."""
    return str(attribute.metadata.get("key", attribute.name))


def _fail(attribute: attrs.Attribute, what: str, value: object) -> ConfigError:
    name = key_of(attribute)
    return ConfigError(f"{name}: must be {what}, got {value!r:.40}", field=name)


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


@frozen
class Integer:
    """A whole number (not a bool, not a float) in [low, high]; None too when `optional`. A
    record rather than a closure, so the bounds can be read (the property tests do)."""

    low: int | None = None
    high: int | None = None
    optional: bool = False

    def __call__(self, _inst: object, attribute: attrs.Attribute, value: Any) -> None:
        if value is None and self.optional:
            return
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(attribute, "a whole number" + (" or null" if self.optional else ""),
                        value)
        if not _in_range(value, self.low, self.high, False, False):
            bounds = "> 0" if (self.low, self.high) == (1, None) \
                else _bounds(self.low, self.high, False, False)
            raise _fail(attribute, bounds, value)


@frozen
class Number:
    """A finite number within the bounds (open where asked); None too when `optional`."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    optional: bool = False

    def __call__(self, _inst: object, attribute: attrs.Attribute, value: Any) -> None:
        if value is None and self.optional:
            return
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _fail(attribute, "a number" + (" or null" if self.optional else ""), value)
        if not math.isfinite(value):
            raise _fail(attribute, "a finite number", value)
        if not _in_range(value, self.low, self.high, self.low_open, self.high_open):
            raise _fail(attribute, _bounds(self.low, self.high, self.low_open, self.high_open),
                        value)


def integer(low: int | None = None, high: int | None = None, *, optional: bool = False) -> Validator:
    return Integer(low, high, optional)


def number(low: float | None = None, high: float | None = None, *, low_open: bool = False,
           high_open: bool = False, optional: bool = False) -> Validator:
    return Number(low, high, low_open, high_open, optional)


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


def enum_value(field: str, members: type[enum.Enum]) -> Callable[[Any], Any]:
    """A converter from a member's value ("exact") to the member; anything else is a one-line
    ConfigError naming `field` and listing the values."""

    def convert(value: Any) -> Any:
        if isinstance(value, members):
            return value
        try:
            return members(value)
        except ValueError:
            names = " or ".join(repr(m.value) for m in members)
            raise ConfigError(f"{field}: unknown value {value!r:.40}; use {names}",
                              field=field) from None

    return convert


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


def int_field(default: int | None, low: int, high: int | None = None, *, none: bool = False,
              key: str | None = None) -> Any:
    """A whole-number field in [low, high]; None is allowed too when the default is None or
    `none` says so (None turns a limit off). `key`: its flat spelling in a config file."""
    return field(default=default, validator=integer(low, high, optional=none or default is None),
                 metadata=_key(key))


def float_field(default: float | None, validator: Validator, *, key: str | None = None) -> Any:
    return field(default=default, converter=to_float, validator=validator, metadata=_key(key))


def flag_field(default: bool, *, key: str | None = None) -> Any:
    return field(default=default, validator=flag, metadata=_key(key))


def _key(key: str | None) -> dict[str, str]:
    return {} if key is None else {"key": key}
