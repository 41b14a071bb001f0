"""A baseline run's state: the skills it has seen, the execution ledger, the budget.

It answers what the shell reads from a run's state after every yielded step (`text`, `budget`,
`round`, `finished`, `accepted_per_epoch`), like StraTune's `State`. A method's own progress
(its minibatch order, its current skill, its pool) lives in the method's loop, which yields
this record after each step.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import attrs
from attrs import field, frozen

from stratune_core.budget.admission import Budget
from stratune_core.budget.ledger import Ledger
from stratune_core.config.knobs import Config
from stratune_core.config.serde import unstructure
from stratune_core.records.errors import ConfigError
from stratune_core.records.ids import text_id
from stratune_core.records.method_events import MethodStarted
from stratune_core.records.method_spec import MethodSpec
from stratune_core.records.task import Task
from stratune_core.state.events import Event, RunStarted, SkillAdded


@frozen(kw_only=True)
class MethodState:
    round: int = 0
    current_id: str
    skills: Mapping[str, str]
    parents: Mapping[str, str | None]
    ledger: Ledger
    budget: Budget
    accepted_per_epoch: tuple[int, ...] = field(default=(), converter=tuple)
    finished: bool = False

    @property
    def current_text(self) -> str:
        return self.skills[self.current_id]

    def text(self, skill_id: str) -> str:
        return self.skills[skill_id]

    def evolve(self, **changes: object) -> MethodState:
        return attrs.evolve(self, **changes)

    def add_skill(self, text: str, parent_id: str | None) -> tuple[MethodState, str, tuple[Event, ...]]:
        """Register a skill text; the `SkillAdded` event comes only the first time."""
        sid = text_id(text)
        if sid in self.skills:
            return self, sid, ()
        state = self.evolve(skills={**self.skills, sid: text},
                            parents={**self.parents, sid: parent_id})
        return state, sid, (SkillAdded(skill_id=sid, text=text, parent_id=parent_id),)

    def accept(self, skill_id: str) -> MethodState:
        """`skill_id` becomes the current skill (counted as an acceptance in the round's epoch)."""
        counts = list(self.accepted_per_epoch) or [0]
        counts[-1] += 1
        return self.evolve(current_id=skill_id, accepted_per_epoch=tuple(counts))


def start(spec: MethodSpec, config: Config, task: Task) -> tuple[MethodState, tuple[Event, ...]]:
    """The initial skill, the budget B (no reserve: each method holds back what its own final
    choice needs) and the events that open every baseline run."""
    train = task.split("train")
    if not train:
        raise ConfigError(f"task {task.info.name}: the training split is empty")
    limit = config.budget_for(len(train))
    text = task.info.initial_skill
    sid = text_id(text)
    state = MethodState(current_id=sid, skills={sid: text}, parents={sid: None},
                        ledger=Ledger(entries={}), budget=Budget(limit=limit),
                        accepted_per_epoch=(0,))
    settings = unstructure(spec)
    events: tuple[Event, ...] = (
        RunStarted(task=task.info.name, n_train=len(train), budget=limit, reserve=0,
                   initial_skill_id=sid, n_batches=0),
        SkillAdded(skill_id=sid, text=text, parent_id=None),
        MethodStarted(method=spec.method,
                      settings=json.dumps(settings, sort_keys=True, separators=(",", ":"))),
    )
    return state, events
