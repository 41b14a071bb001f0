"""The opening shared by the methods with an internal validation split (their spec's
`validation_frac`): the split, and the initial skill scored on its validation side."""

from __future__ import annotations

from attrs import frozen

from stratune_core.config.knobs import Config
from stratune_core.methods.executions import execute, scored
from stratune_core.methods.finish import finish
from stratune_core.methods.splits import split_fit_validation
from stratune_core.methods.state import MethodState, start
from stratune_core.records.enums import StopReason
from stratune_core.records.method_events import SplitMade
from stratune_core.records.method_spec import MethodSpec
from stratune_core.records.purposes import MethodPurpose
from stratune_core.records.task import Task
from stratune_core.state.context import Env
from stratune_core.state.events import Event


@frozen(kw_only=True)
class Opened:
    state: MethodState
    events: tuple[Event, ...]
    fit: tuple[str, ...]
    validation: tuple[str, ...]
    score: float | None  # the initial skill on the validation split; None: the run has ended


def open_with_validation(spec: MethodSpec, validation_frac: float, config: Config, task: Task,
                         env: Env) -> Opened:
    """Start the run, split train (fit / validation) and score the initial skill on the
    validation side; a budget too small for that ends the run here (`score` None)."""
    state, opening = start(spec, config, task)
    fit, val = split_fit_validation(env.train_ids, validation_frac, config.seed)
    state, paid, runs = execute(state, env, state.current_id, val,
                                purpose=MethodPurpose.VALIDATION)
    events: tuple[Event, ...] = (*opening, SplitMade(fit_ids=fit, validation_ids=val), *paid)
    if runs is None:
        state, done = finish(state, state.current_id, StopReason.BUDGET)
        return Opened(state=state, events=(*events, *done), fit=fit, validation=val, score=None)
    score, seen = scored(state, env, state.current_id, val, purpose=MethodPurpose.VALIDATION)
    return Opened(state=state, events=(*events, seen), fit=fit, validation=val, score=score)
