"""What a caller of `runner.train` may add to a run without changing what it records.

A grid builds each cell's models and task itself (in tests: scripted ones, injected in process),
shares gates between cells (one connection limit per endpoint, one cost cap), and watches every
round (stop controls, the live table, MLflow). None of it enters the manifest or the events: a
run trained with hooks is the same run as one trained without, and resumes either way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from attrs import field, frozen

from llm_cache.accounting import Accounting
from llm_cache.backends.base import Backend
from llm_cache.gates import CallGate
from llm_cache.records import Role
from stratune_core.records.task import Task
from stratune_core.state.events import Event
from stratune_core.state.state import State


class RoundObserver(Protocol):
    def after_round(self, state: State, events: Sequence[Event], accounting: Accounting) -> None:
        """Called after each round's events are on disk; may raise StopRequested."""
        ...


@frozen(kw_only=True)
class TrainHooks:
    backends: Mapping[Role, Backend] | None = None  # None: built from the model specs
    task: Task | None = None  # None: loaded from the task spec
    gate: CallGate | None = None  # entered before every paid call
    observers: tuple[RoundObserver, ...] = field(default=(), converter=tuple)

    def after_round(self, state: State, events: Sequence[Event], accounting: Accounting) -> None:
        for observer in self.observers:
            observer.after_round(state, events, accounting)
