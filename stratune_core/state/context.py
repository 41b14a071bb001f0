"""What a round needs besides the state: the config, the task, the model door, and facts
derived once from the task. Built by `run`; never persisted."""

from __future__ import annotations

from collections.abc import Mapping

from attrs import frozen

from stratune_core.config.knobs import Config
from stratune_core.config.shape import RunShape, run_shape
from stratune_core.records.base import Sample
from stratune_core.records.llm import LLM
from stratune_core.records.method_spec import Generator
from stratune_core.records.parts import Placeholders
from stratune_core.records.task import Task


@frozen(kw_only=True)
class Env:
    config: Config
    task: Task
    llm: LLM
    samples: Mapping[str, Sample]
    train: tuple[Sample, ...]
    train_ids: tuple[str, ...]
    eps0: float
    threshold: float
    shape: RunShape
    # Table 4's hybrids: another method's candidate generation in StraTune's rounds
    generator: Generator | None = None
    answer_markup: tuple[str, ...] = ()  # what the task's scorer parses (`TaskInfo`)
    placeholders: Placeholders = ()  # what every revision keeps, by part (`TaskInfo`)

    @classmethod
    def build(cls, config: Config, task: Task, llm: LLM,
              generator: Generator | None = None) -> Env:
        train = tuple(task.split("train"))
        info = task.info
        return cls(
            config=config,
            task=task,
            llm=llm,
            samples={s.id: s for s in train},
            train=train,
            train_ids=tuple(s.id for s in train),
            eps0=info.eps0 if config.eps0 is None else config.eps0,
            threshold=(info.success_threshold if config.success_threshold is None
                       else config.success_threshold),
            shape=run_shape(config, len(train)),
            generator=generator,
            answer_markup=info.answer_markup,
            placeholders=info.placeholders,
        )
