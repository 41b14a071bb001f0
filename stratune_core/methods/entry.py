"""One training method as the product knows it: `MethodEntry`, everything every reader needs
(the driver, the settings record, plan's estimate, the smallest useful budget, the prompt
version, compare's label, the Config fields it takes, the packages it runs through, its own
events and how they are shown).

Each method's module defines its own entry (`ENTRY`) with its own numbers; the registry
(`round/registry.METHODS`) holds them all, StraTune's included, and every reader (the command
line's options, `compare`, `plan`, the manifest's prompt version and package versions) asks the
registry, never the method's class name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol

from attrs import field, frozen

from stratune_core.budget.admission import Budget
from stratune_core.config.knobs import Config
from stratune_core.methods.event_view import EventView
from stratune_core.methods.proposal import Propose
from stratune_core.records.enums import StopReason
from stratune_core.records.llm import LLM
from stratune_core.records.method_spec import Method
from stratune_core.records.task import Task
from stratune_core.state.events import Event

# Config fields every method takes from a --config file, a grid or the Python API's `config`:
# the shared budget and seed, and the cap on each optimizer reply, which every method's optimizer
# calls carry.
SHARED_SETTINGS = frozenset({"budget", "budget_multiplier", "seed", "optimizer_max_tokens"})
ROUNDS = frozenset({"max_rounds"})  # for a method whose steps `--max-rounds` counts


class RunState(Protocol):
    """What the shell reads from the state a method yields after every step (StraTune's `State`
    and the baselines' `MethodState` both answer it)."""

    @property
    def round(self) -> int: ...

    @property
    def budget(self) -> Budget: ...

    @property
    def finished(self) -> bool: ...

    def text(self, skill_id: str) -> str: ...


Step = tuple[RunState, tuple[Event, ...]]
Runner = Callable[[Any, Config, Task, LLM], Iterator[Step]]


@frozen(kw_only=True)
class MethodEstimate:
    target_executions: int  # counted in the budget
    optimizer_calls: int
    uncounted_target_calls: int = 0  # target calls outside the budget (summaries)
    steps: int = 0  # updates proposed, or revision turns


Estimate = Callable[[Any, int, int], MethodEstimate]  # (spec, |train|, budget)


@frozen(kw_only=True)
class MethodEntry:
    """`estimate` is None for StraTune, whose plan is the run's own shape (`stratune plan`);
    `minimum_budget` None means one execution suffices (StraTune checks its rounds itself);
    `config_fields` None means every Config field; `hybrid` names the method's candidate
    generation inside StraTune's rounds (Table 4), when it has one; `fit` adjusts the settings
    to the target model (whether it takes a sampling temperature) before the run records them;
    `events`: the method's own events with their views (the trace's event union and the
    viewer read them)."""

    method: Method
    spec: type
    label: str
    iterate: Runner
    prompt_version: str
    estimate: Estimate | None = None
    minimum_budget: Callable[[Any, int], int] | None = None
    config_fields: frozenset[str] | None = field(default=SHARED_SETTINGS)
    packages: tuple[str, ...] = ()
    hybrid: str | None = None
    # the settings as the run records them for its target: `fit(spec, takes_temperature)`
    fit: Callable[[Any, bool], Any] | None = None
    # what to do about a stop reason when this method is its cause (the shell's stop notes)
    stop_notes: tuple[tuple[StopReason, str], ...] = ()
    # what the target writes outside the budget besides its executions (compare's notes)
    target_writes: str | None = None
    propose: Propose | None = None  # its candidate generation in a hybrid, with `hybrid`
    events: tuple[EventView, ...] = ()

    @property
    def baseline(self) -> bool:
        """A baseline's settings are its own record, not the Config: it has no profiles, no
        ablations, and its plan is its `estimate` (StraTune's is the run's own shape)."""
        return self.config_fields is not None


def validation_size(frac: float, n_train: int) -> int:
    """The internal validation split of a method that holds one out: at least one sample, and
    one left to fit on."""
    return min(max(1, round(frac * n_train)), max(0, n_train - 1))


def smallest_budget(estimate: Estimate, spec: Any, n_train: int) -> int:
    """The smallest budget with which `estimate` makes one step. Below it the run would spend
    its initial validation and stop with nothing learned; a training set on which no budget
    makes a step gives a budget refused at any size."""
    low = 1
    while low <= 64 * max(1, n_train) and estimate(spec, n_train, low).steps < 1:
        low = low * 2
    if estimate(spec, n_train, low).steps < 1:
        return low
    high = low
    low = high // 2
    while low + 1 < high:
        middle = (low + high) // 2
        if estimate(spec, n_train, middle).steps >= 1:
            high = middle
        else:
            low = middle
    return high
