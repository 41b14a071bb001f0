"""The driver loop: iterate `step` until the budget or a stop rule ends the run, then final
skill selection. `iterate` yields after every round so the shell can persist events as they
happen; `run` collects everything into a `RunResult`."""

from __future__ import annotations

from collections.abc import Iterator

from attrs import frozen

from stratune_core.config.knobs import Config
from stratune_core.records.enums import StopReason
from stratune_core.records.llm import LLM
from stratune_core.records.method_spec import Generator
from stratune_core.records.task import Task
from stratune_core.round.final import final_selection
from stratune_core.round.i2_window import flush_window
from stratune_core.round.step import round_step, stop_reason
from stratune_core.state.context import Env
from stratune_core.state.events import Event, RunFinished, RunStarted, SkillAdded
from stratune_core.state.state import State, initial_state, round_rng

FINAL_STREAM = 1
FLUSH_STREAM = 2  # the released code's I2 window flush, before final selection


@frozen(kw_only=True)
class RunResult:
    final_id: str
    final_text: str
    stop_reason: StopReason
    rounds: int
    spent: int
    budget: int
    events: tuple[Event, ...]
    state: State


def iterate(config: Config, task: Task, llm: LLM, generator: Generator | None = None,
            ) -> Iterator[tuple[State, tuple[Event, ...]]]:
    """`generator`: a hybrid of Table 4 generates the candidates (None: StraTune's own)."""
    env = Env.build(config, task, llm, generator)
    state = initial_state(config, task)
    yield state, (
        RunStarted(
            task=task.info.name, n_train=len(env.train), budget=state.budget.limit,
            reserve=state.budget.reserve, initial_skill_id=state.current_id,
            n_batches=len(state.batches),
        ),
        SkillAdded(skill_id=state.current_id, text=state.current_text, parent_id=None),
    )
    while (reason := stop_reason(state, env)) is None:
        state, events = round_step(state, env, round_rng(config.seed, state.round))
        yield state, events
    state, flushed = flush_window(state, env, round_rng(config.seed, state.round, FLUSH_STREAM))
    if flushed:
        yield state, flushed
    state, events, final_id = final_selection(state, env, round_rng(config.seed, state.round, FINAL_STREAM))
    done = RunFinished(
        final_id=final_id, reason=reason, rounds=state.round, spent=state.budget.spent,
        budget=state.budget.limit,
    )
    state = state.evolve(finished=True, stop_reason=reason)
    yield state, (*events, done)


def run(config: Config, task: Task, llm: LLM) -> RunResult:
    events: list[Event] = []
    last: State | None = None
    for last, evs in iterate(config, task, llm):  # noqa: B007
        events.extend(evs)
    assert last is not None
    state = last
    final = events[-1]
    assert isinstance(final, RunFinished)
    return RunResult(
        final_id=final.final_id,
        final_text=state.text(final.final_id),
        stop_reason=final.reason,
        rounds=final.rounds,
        spent=final.spent,
        budget=final.budget,
        events=tuple(events),
        state=state,
    )
