"""`stratune.dspy.StraTune`: StraTune as a DSPy optimizer (a teleprompter's `compile`).

The run is a StraTune run like any other (`stratune.optimize` underneath): the budget counts
runs of the whole program on one example, every LM call goes through the run's cache, the run
directory `out` is its trace (`stratune view`, `compare`), a second call with the same
arguments resumes a stopped run or reads back a finished one, and `replay` recomputes it
offline. Only the task is the caller's: the program and the metric are Python objects, so the
run is replayed from Python (`StraTune.replay`) rather than by `stratune replay`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import dspy

from replay.api.checks import replay as replay_run
from replay.api.output import raised_as_errors
from replay.api.results import OptimizeResult, ReplayResult
from replay.api.training import optimize
from replay.dspy_program.task import Metric, ProgramTask, with_instructions
from replay.models import specs as models
from stratune_core.records.errors import StraTuneError
from stratune_core.records.parts import SkillParts

PREFIX = "dspy:"


class StraTune:
    """Learn a DSPy program's instructions with StraTune.

    metric(example, prediction, trace=None): a number in [0, 1], a bool, or a prediction with
    `score` and `feedback` (the feedback is shown to the optimizer as the scorer's account).
    target / optimizer: model specs as `--target` / `--optimizer` take them; the program's LM
    calls go to `target`, whatever LM `dspy.configure` names. budget: target executions
    ("6x": six runs of the program per training example). threshold: the metric value at
    which an example counts as solved. max_tokens: the reply limit of a call whose LM sets
    none. Other arguments as `stratune.optimize` takes them."""

    def __init__(self, metric: Metric, *, target: str, optimizer: str, out: str | Path,
                 budget: str | int | None = "6x", seed: int = 0, profile: str = "paper",
                 config: Mapping[str, Any] | str | Path | None = None, concurrency: int = 8,
                 max_cost: float | str | None = None, timeout: float | str | None = None,
                 progress: bool | None = None, threshold: float = 1.0,
                 max_tokens: int = 1024, name: str | None = None) -> None:
        if not callable(metric):
            raise StraTuneError(f"metric: {metric!r:.40} is not callable; give a function "
                                "(example, prediction, trace=None) -> score")
        self.metric = metric
        with raised_as_errors():  # a spec no run can use, refused here rather than at compile
            for spec in (target, optimizer):
                models.canonical_model(spec)
        self.run_options: dict[str, Any] = dict(
            target=target, optimizer=optimizer, out=out, budget=budget, seed=seed,
            profile=profile, config=config, concurrency=concurrency, max_cost=max_cost,
            timeout=timeout, progress=progress)
        self.threshold = threshold
        self.max_tokens = max_tokens
        self.name = name
        self.result: OptimizeResult | None = None

    def task(self, program: dspy.Module, trainset: Sequence[dspy.Example],
             valset: Sequence[dspy.Example] | None = None) -> tuple[str, ProgramTask]:
        """The run's task spec and the task it names."""
        name = self.name or re.sub(r"[^A-Za-z0-9_.-]", "-", type(program).__name__)
        task = ProgramTask(program, self.metric, name=name, trainset=list(trainset),
                           valset=list(valset or ()), threshold=self.threshold,
                           max_tokens=self.max_tokens)
        return f"{PREFIX}{name}@{task.fingerprint()}", task

    def compile(self, program: dspy.Module, *, trainset: Sequence[dspy.Example],
                valset: Sequence[dspy.Example] | None = None) -> dspy.Module:
        """A copy of `program` whose predictors' instructions are the learned skill's parts
        (same predictors, signatures and demos). With `valset`, the initial and the learned
        instructions are also scored on it (`result.test_scores`). `self.result` holds the
        run: its trajectory, cost and trace directory."""
        spec, task = self.task(program, trainset, valset)
        options = dict(self.run_options)
        with _registered(spec, task):
            self.result = optimize(spec, test_eval=bool(valset), **options)
        return with_instructions(program, SkillParts.read(self.result.final_skill).as_dict())

    def replay(self, program: dspy.Module, *, trainset: Sequence[dspy.Example],
               valset: Sequence[dspy.Example] | None = None) -> ReplayResult:
        """Recompute the run in `out` offline from its cache and check every event against its
        trace; raises `stratune.ReplayFailed` naming the first difference."""
        spec, task = self.task(program, trainset, valset)
        with _registered(spec, task):
            return replay_run(self.run_options["out"])


def _registered(spec: str, task: ProgramTask) -> Any:
    active = models.active()
    return models.using(models.Extensions(models=active.models,
                                          tasks={**active.tasks, spec: lambda _spec: task}))
