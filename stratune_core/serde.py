"""One private cattrs converter for core records (STYLE §2: serialization at the edge).

Enums by value, tuples and frozensets as JSON lists (frozensets sorted, so dumps are
deterministic), `Any` payloads passed through, `TextBlock | ImageBlock` tagged with "_type",
misspelt keys rejected. The shell registers further tagged unions (events) through
`register_tagged_union`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, get_origin

import cattrs
from cattrs.strategies import configure_tagged_union

from llm_cache.records import Block
from stratune_core.ledger import Ledger
from stratune_core.records import Execution

T = TypeVar("T")

TAG = "_type"


def _unstructure_frozenset(value: frozenset) -> list:
    try:
        return sorted(converter.unstructure(v) for v in value)
    except TypeError:  # mixed types have no order: fall back to the iteration order
        return [converter.unstructure(v) for v in value]


def _is_frozenset(cls: Any) -> bool:
    return cls is frozenset or get_origin(cls) is frozenset


def _unstructure_ledger(ledger: Ledger) -> list:
    return [converter.unstructure(e) for e in ledger.executions()]


def _structure_ledger(data: Any, _cls: type) -> Ledger:
    if isinstance(data, Mapping) or not isinstance(data, Sequence):
        raise ValueError("ledger: expected a list of executions")
    return Ledger.of(converter.structure(e, Execution) for e in data)


def _strict(kind: type, accepts: tuple[type, ...], name: str) -> Any:
    """JSON types are checked, not coerced: cattrs would turn "no" into True and 1.5 into 1."""

    def hook(value: Any, _cls: type) -> Any:
        if isinstance(value, bool) and kind is not bool:
            raise TypeError(f"expected {name}, got a boolean")
        if not isinstance(value, accepts):
            raise TypeError(f"expected {name}, got {type(value).__name__} {value!r:.40}")
        return kind(value)

    return hook


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(
        forbid_extra_keys=True,
        unstruct_collection_overrides={tuple: list, Sequence: list},
    )
    conv.register_unstructure_hook_func(_is_frozenset, _unstructure_frozenset)
    conv.register_unstructure_hook(Ledger, _unstructure_ledger)
    conv.register_structure_hook(Ledger, _structure_ledger)
    conv.register_structure_hook(bool, _strict(bool, (bool,), "true or false"))
    conv.register_structure_hook(int, _strict(int, (int,), "an integer"))
    conv.register_structure_hook(float, _strict(float, (int, float), "a number"))
    conv.register_structure_hook(str, _strict(str, (str,), "a string"))
    configure_tagged_union(Block, conv, tag_name=TAG)
    return conv


converter = _make_converter()


def register_tagged_union(union_type: Any, tag_name: str = TAG) -> None:
    """Serialize `union_type` (e.g. the Event union) with the class name under `tag_name`."""
    configure_tagged_union(union_type, converter, tag_name=tag_name)


def unstructure(obj: Any, as_type: Any = None) -> Any:
    """JSON-ready data; pass a registered union as `as_type` to get its "_type" tag."""
    return converter.unstructure(obj, unstructure_as=as_type)


def structure(data: Any, cls: type[T]) -> T:
    return converter.structure(data, cls)
