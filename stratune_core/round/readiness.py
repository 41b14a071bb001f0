"""Released code: a candidate whose screening set was not ready (`evaluation/screen_usage.py`) is
screened at the start of the next round, before anything new is generated, against the
current skill of that round; a set that is still not ready rejects it for insufficient
evidence. In the paper no set waits: nothing is ever deferred."""

from __future__ import annotations

import attrs
import numpy as np

from stratune_core.round.candidate_eval import evaluate_candidate
from stratune_core.state.context import Env
from stratune_core.state.events import Event
from stratune_core.state.state import State


def rescreen_deferred(state: State, env: Env,
                      rng: np.random.Generator) -> tuple[State, tuple[Event, ...]]:
    events: list[Event] = []
    waiting, state = state.deferred, state.evolve(deferred=())
    for sub in waiting:
        state, evs, _ = evaluate_candidate(state, env, attrs.evolve(sub, retry=True), rng)
        events.extend(evs)
    return state, tuple(events)
