"""The one list of strategy selectors, and the reading of their spellings.

Adding a selector is one class (a `Selector` subclass) plus one entry in `SELECTORS`: the
config, the command line's help, the manifest and the tests all read this tuple.
"""

from __future__ import annotations

from stratune_core.records.enums import ChoiceRule
from stratune_core.records.errors import ConfigError
from stratune_core.selection.selectors.adaptive import Bandit, LLMSelector, Once
from stratune_core.selection.selectors.base import Selector, Source
from stratune_core.selection.selectors.scripted import Fixed, RandomChoice, ReplaySequence, Rotation

SELECTORS: tuple[type[Selector], ...] = (
    LLMSelector,
    Fixed,
    RandomChoice,
    Rotation,
    Once,
    ReplaySequence,
    Bandit,
)

_BY_NAME: dict[str, type[Selector]] = {cls.name: cls for cls in SELECTORS}


def selector_usage() -> str:
    """Every spelling, for help texts and error messages."""
    return " | ".join(cls.usage for cls in SELECTORS)


def parse_selector(text: str) -> Selector:
    """`llm`, `fixed:I1`, `replay:runs/a`, ... as a selector record; else a one-line ConfigError."""
    if not isinstance(text, str):
        raise ConfigError(f"selector: expected a string such as 'llm', got {text!r:.40}")
    name, colon, argument = text.partition(":")
    cls = _BY_NAME.get(name)
    if cls is None:
        raise ConfigError(f"selector: unknown value {text!r}; use {selector_usage()}")
    return cls.parse(argument if colon else None)


def to_selector(value: Selector | str) -> Selector:
    """Config's converter: a record passes, a spelling is parsed."""
    return value if isinstance(value, Selector) else parse_selector(value)


def to_source(value: Source | str) -> Source:
    """Events' converter: a `ChoiceRule` value or a selector spelling."""
    if isinstance(value, Selector | ChoiceRule):
        return value
    try:
        return ChoiceRule(value)
    except ValueError:
        return parse_selector(value)
