"""Converters for core records (serialization stays at the edge: the core never calls these).

`make_converter()` builds a fresh cattrs converter; the shell builds its trace converter with
it, naming the tagged unions it needs (the `Event` union) at construction. Nothing registers
into a converter after it is built, and no converter is shared for mutation.

Conventions: enums by value, tuples and frozensets as JSON lists (frozensets sorted, so dumps
are deterministic), `Any` payloads passed through, `TextBlock | ImageBlock` tagged with "_type",
misspelt keys rejected, JSON types checked rather than coerced. The ablation values of `Config`
(selector, operator, forms) and an operator choice's source are written as their command-line
spellings and read back by the records' own converters, the same code that reads a flag.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, get_origin

import cattrs
from cattrs.gen import make_dict_structure_fn
from cattrs.strategies import configure_tagged_union
from cattrs.v import format_exception

from llm_cache.records import Block
from stratune_core.budget.ledger import Ledger
from stratune_core.config.flat import nest
from stratune_core.config.knobs import Config
from stratune_core.config.operators import Operator
from stratune_core.records.base import Execution
from stratune_core.records.enums import FormMenu
from stratune_core.records.errors import StraTuneError
from stratune_core.selection.selectors.base import Selector, Source

T = TypeVar("T")

TAG = "_type"


def _is_frozenset(cls: Any) -> bool:
    return cls is frozenset or get_origin(cls) is frozenset


def _is_spelled(cls: Any) -> bool:
    """Types written as their spelling (`fixed:I1`, `I3+F1`, `F4`, `first-round`)."""
    if cls == Source:
        return True
    return isinstance(cls, type) and issubclass(cls, Selector | Operator | FormMenu)


def _strict(kind: type, accepts: tuple[type, ...], name: str) -> Any:
    """JSON types are checked, not coerced: cattrs would turn "no" into True and 1.5 into 1."""

    def hook(value: Any, _cls: type) -> Any:
        if isinstance(value, bool) and kind is not bool:
            raise TypeError(f"expected {name}, got a boolean")
        if not isinstance(value, accepts):
            raise TypeError(f"expected {name}, got {type(value).__name__} {value!r:.40}")
        return kind(value)

    return hook


def make_converter(tagged_unions: Sequence[Any] = ()) -> cattrs.Converter:
    """A converter for core records; each of `tagged_unions` is written with its class name
    under "_type" when unstructured as the union."""
    conv = cattrs.Converter(
        forbid_extra_keys=True,
        unstruct_collection_overrides={tuple: list, Sequence: list},
    )

    def unstructure_frozenset(value: frozenset) -> list:
        try:
            return sorted(conv.unstructure(v) for v in value)
        except TypeError:  # mixed types have no order: fall back to the iteration order
            return [conv.unstructure(v) for v in value]

    def structure_ledger(data: Any, _cls: type) -> Ledger:
        if isinstance(data, Mapping) or not isinstance(data, Sequence):
            raise ValueError("ledger: expected a list of executions")
        return Ledger.of(conv.structure(e, Execution) for e in data)

    conv.register_unstructure_hook_func(_is_frozenset, unstructure_frozenset)
    conv.register_unstructure_hook(Ledger, lambda ledger: [conv.unstructure(e) for e in ledger.executions()])
    conv.register_structure_hook(Ledger, structure_ledger)
    conv.register_unstructure_hook_func(_is_spelled, str)
    conv.register_structure_hook_func(_is_spelled, lambda value, _cls: value)
    # a StrEnum is a str: without this hook cattrs passes the member through as it is
    conv.register_unstructure_hook(enum.StrEnum, lambda member: member.value)
    conv.register_structure_hook(bool, _strict(bool, (bool,), "true or false"))
    conv.register_structure_hook(int, _strict(int, (int,), "an integer"))
    conv.register_structure_hook(float, _strict(float, (int, float), "a number"))
    conv.register_structure_hook(str, _strict(str, (str,), "a string"))
    for union in (Block, *tagged_unions):
        configure_tagged_union(union, conv, tag_name=TAG)
    config_fields = make_dict_structure_fn(Config, conv)
    # a manifest written before the mechanisms were records spells them flat
    conv.register_structure_hook(
        Config, lambda data, cls: config_fields(nest(data) if isinstance(data, Mapping) else data,
                                                cls))
    return conv


@functools.cache
def _records() -> cattrs.Converter:
    return make_converter()


def unstructure(obj: Any, as_type: Any = None) -> Any:
    """JSON-ready data of a core record (a fresh default converter, built once)."""
    return _records().unstructure(obj, unstructure_as=as_type)


def structure(data: Any, cls: type[T]) -> T:
    return _records().structure(data, cls)


def _format(exc: BaseException, type_: Any) -> str:
    if isinstance(exc, StraTuneError):  # a validator's own message already says what to do
        return str(exc)
    if isinstance(exc, cattrs.ForbiddenExtraKeysError):
        names = ", ".join(repr(name) for name in sorted(exc.extra_fields))
        return f"unknown field(s) {names}: remove or fix them"
    return format_exception(exc, type_)


def one_line(exc: BaseException) -> str:
    """A structuring error as one line: cattrs' nested errors flattened into 'what @ $.path'
    parts, a library error as its message."""
    if isinstance(exc, cattrs.BaseValidationError):
        return "; ".join(cattrs.transform_error(exc, format_exception=_format)) or str(exc)
    if isinstance(exc, StraTuneError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
