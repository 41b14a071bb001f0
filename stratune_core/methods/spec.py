"""Which method trains the skill, and that method's settings (paper App. "Baseline Settings").

A method is a tagged union of frozen records, one per method, each with the paper's values as
defaults. The manifest stores the record; a manifest without one is a StraTune run, so every
trace recorded before the baselines existed still replays to its digest.
"""

from __future__ import annotations

import enum
from typing import ClassVar

import attrs
from attrs import field, frozen

from stratune_core.errors import ConfigError


class Method(enum.StrEnum):
    STRATUNE = "stratune"
    TEXTGRAD = "textgrad"


def _positive(_inst: object, attribute: attrs.Attribute, value: int) -> None:
    if value < 1:
        raise ConfigError(f"method {attribute.name}: must be at least 1, got {value}",
                          field=attribute.name)


def _fraction(_inst: object, attribute: attrs.Attribute, value: float) -> None:
    if not 0.0 < value < 1.0:
        raise ConfigError(f"method {attribute.name}: must lie strictly between 0 and 1, got "
                          f"{value}", field=attribute.name)


@frozen(kw_only=True)
class StraTuneMethod:
    """Adaptive operator selection with candidate evaluation: the settings live in `Config`."""

    method: ClassVar[Method] = Method.STRATUNE


@frozen(kw_only=True)
class TextGradMethod:
    """Textual gradients on minibatches of 3, each update kept only if the internal validation
    score does not drop; train split 80/20 for updates and validation."""

    method: ClassVar[Method] = Method.TEXTGRAD
    minibatch: int = field(default=3, validator=_positive)
    validation_frac: float = field(default=0.2, validator=_fraction)


MethodSpec = StraTuneMethod | TextGradMethod

SPECS: tuple[type[MethodSpec], ...] = MethodSpec.__args__  # type: ignore[attr-defined]
_BY_METHOD: dict[Method, type[MethodSpec]] = {cls.method: cls for cls in SPECS}


def method_names() -> tuple[str, ...]:
    return tuple(m.value for m in Method)


def default_spec(name: str) -> MethodSpec:
    """The paper's settings of the method called `name`; a one-line error for an unknown one."""
    try:
        method = Method(name)
    except ValueError:
        raise ConfigError(f"--method: unknown method {name!r}; use one of "
                          f"{' | '.join(method_names())}") from None
    return _BY_METHOD[method]()
