"""The door for a program's own model kinds and tasks: `Extensions`, made active around library
calls with `using(...)` and read by `replay.models.specs`. Kept apart from `replay.models.specs` so that the
command line can set it up without importing the backends (`stratune --help` stays fast)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType
from typing import TYPE_CHECKING

from attrs import field, frozen

if TYPE_CHECKING:
    from llm_cache.backends import Backend
    from replay.rundir.serde import TaskSpec
    from stratune_core.records.task import Task


@frozen(kw_only=True)
class ModelKind:
    """A model spec family `<prefix>:<body>`: its canonical id (what enters requests and the
    cache key) and its backend, both from the spec's body."""

    canonical: Callable[[str], str]
    backend: Callable[[str], Backend]
    # what it checks before a run directory is made (a harness's CLI, its key), if anything
    check: Callable[[str], None] | None = None


def _frozen_map(value: Mapping[str, object]) -> Mapping[str, object]:
    return MappingProxyType(dict(value))


@frozen(kw_only=True)
class Extensions:
    models: Mapping[str, ModelKind] = field(factory=dict, converter=_frozen_map)
    tasks: Mapping[str, Callable[[TaskSpec], Task]] = field(factory=dict, converter=_frozen_map)


_NONE = Extensions()
_ACTIVE: ContextVar[Extensions | None] = ContextVar("stratune_extensions", default=None)


def active() -> Extensions:
    return _ACTIVE.get() or _NONE


@contextmanager
def using(extensions: Extensions) -> Iterator[Extensions]:
    """Make `extensions` visible to the functions below for the duration of the block."""
    token = _ACTIVE.set(extensions)
    try:
        yield extensions
    finally:
        _ACTIVE.reset(token)
