"""A state threaded through a sequence of steps, and the events those steps emitted, in order.

Steps stay pure functions that return `(state, events)` or `(state, events, value)`; a `Trail`
only does the bookkeeping their callers repeat (`state, evs, x = step(state, ...)` then
`events.extend(evs)`). It lives for one call of one strategy or stage and is never stored:
what a round returns is still a `State` and a tuple of event records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from attrs import define, field

from stratune_core.state.events import Event
from stratune_core.state.state import State

T = TypeVar("T")
Result = tuple[State, tuple[Event, ...]]


@define
class Trail:
    state: State
    events: list[Event] = field(factory=list)

    def add(self, step: tuple[State, Sequence[Event]]) -> None:
        """Take a step's state and keep its events."""
        self.state, events = step
        self.events.extend(events)

    def take(self, step: tuple[State, Sequence[Event], T]) -> T:
        """Take a step's state, keep its events and return its value."""
        self.state, events, value = step
        self.events.extend(events)
        return value

    def emit(self, *events: Event) -> None:
        self.events.extend(events)

    def result(self) -> Result:
        return self.state, tuple(self.events)
