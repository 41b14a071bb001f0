"""The event that closes every baseline run."""

from __future__ import annotations

from stratune_core.methods.state import MethodState
from stratune_core.records.enums import StopReason
from stratune_core.state.events import Event, RunFinished


def finish(state: MethodState, final_id: str, reason: StopReason,
           ) -> tuple[MethodState, tuple[Event, ...]]:
    done = RunFinished(final_id=final_id, reason=reason, rounds=state.round,
                       spent=state.budget.spent, budget=state.budget.limit)
    return state.evolve(finished=True), (done,)
