"""One entry point for every method: `iterate_method(spec, config, task, llm)` yields
(state, events) after each step, as `stratune_core.round.run.iterate` does for StraTune. The shell
(train, replay, resume, grid) drives every method through it.

Adding a method: its settings record in `spec.py` and one entry in `_RUNNERS`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from stratune_core.config.knobs import Config
from stratune_core.methods import gepa_run, iter_cot, skillopt, textgrad, trace2skill
from stratune_core.records.llm import LLM
from stratune_core.records.method_spec import Method, MethodSpec, StraTuneMethod
from stratune_core.records.task import Task
from stratune_core.round.run import iterate
from stratune_core.state.events import Event

Runner = Callable[[Any, Config, Task, LLM], Iterator[tuple[Any, tuple[Event, ...]]]]


def _stratune(spec: StraTuneMethod, config: Config, task: Task,
              llm: LLM) -> Iterator[tuple[Any, tuple[Event, ...]]]:
    return iterate(config, task, llm, spec.generator)


_RUNNERS: dict[Method, Runner] = {
    Method.STRATUNE: _stratune,
    Method.TEXTGRAD: textgrad.iterate,
    Method.ITER_COT: iter_cot.iterate,
    Method.TRACE2SKILL: trace2skill.iterate,
    Method.SKILLOPT: skillopt.iterate,
    Method.GEPA: gepa_run.iterate,
}


def iterate_method(spec: MethodSpec, config: Config, task: Task,
                   llm: LLM) -> Iterator[tuple[Any, tuple[Event, ...]]]:
    """The run of `spec`'s method; the first yield opens the run, the last closes it with
    `RunFinished`. Every yielded state answers `text(id)`, `budget`, `round`, `finished`."""
    return _RUNNERS[spec.method](spec, config, task, llm)
