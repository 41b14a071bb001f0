"""What every task shares: where the skill goes, the train/test splits, short renderings.

Small local models follow an instruction better when it sits in the user turn, so every task
takes a `placement`; the default keeps the paper's "system = skill verbatim".
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

import attrs
from attrs import field, frozen

from llm_cache.records import Block, CallKind, Message, Request, Role, TextBlock
from stratune_core.records.base import Sample, TaskInfo, preset_for
from stratune_core.records.errors import ConfigError, TaskDataError
from stratune_core.records.parts import as_used


class Placement(enum.Enum):
    SYSTEM = "system"
    USER_PREFIX = "user_prefix"
    USER_SUFFIX = "user_suffix"

    @classmethod
    def parse(cls, value: str | Placement) -> Placement:
        if isinstance(value, Placement):
            return value
        try:
            return cls(value)
        except ValueError:
            names = ", ".join(p.value for p in cls)
            raise ConfigError(f"placement: unknown value {value!r}; use one of {names}") from None


def target_request(
    *,
    skill: str,
    user_text: str,
    model: str,
    max_tokens: int,
    placement: Placement,
    extra_blocks: tuple[Block, ...] = (),
) -> Request:
    """One TARGET_EXECUTION request with the skill placed as asked.

    `extra_blocks` (a DocVQA page image) follow the text block in the user message. A skill of
    several parts goes into its one place whole, its parts in order without their markers.
    """
    skill = as_used(skill)
    system = skill if placement is Placement.SYSTEM else ""
    if placement is Placement.USER_PREFIX:
        user_text = f"{skill}\n\n{user_text}"
    elif placement is Placement.USER_SUFFIX:
        user_text = f"{user_text}\n\n{skill}"
    content = (TextBlock(text=user_text), *extra_blocks)
    return Request(
        role=Role.TARGET,
        model=model,
        system=system,
        messages=(Message.user(content),),
        max_tokens=max_tokens,
        kind=CallKind.TARGET_EXECUTION,
    )


def tail(text: str, limit: int = 400) -> str:
    """The end of a long answer: the final answer usually sits there."""
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


def head(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@frozen(kw_only=True)
class Splits:
    """The samples of a task. Ids are unique within a split; both splits are non-empty."""

    name: str
    train: tuple[Sample, ...] = field(converter=tuple)
    test: tuple[Sample, ...] = field(converter=tuple)

    @train.validator
    @test.validator
    def _check(self, attribute: attrs.Attribute, value: tuple[Sample, ...]) -> None:
        seen: set[str] = set()
        for sample in value:
            if sample.id in seen:
                raise TaskDataError(f"{self.name}/{attribute.name}: duplicate id {sample.id!r}")
            seen.add(sample.id)

    def get(self, split: str) -> tuple[Sample, ...]:
        if split == "train":
            return self.train
        if split == "test":
            return self.test
        raise TaskDataError(f"{self.name}: unknown split {split!r}; use 'train' or 'test'")


@frozen(kw_only=True)
class BenchmarkTask:
    """What the task classes share: the splits, the initial skill, where the skill goes and the
    target's token cap, with `info` built from the class's constants. A task that sends one
    request per sample subclasses `SingleTurnTask` instead and says only what the user turn
    holds; a task with several requests per sample (Mind2Web) writes `requests` itself."""

    NAME: ClassVar[str] = "task"
    SOLVED_AT: ClassVar[float] = 1.0  # the success threshold
    BINARY: ClassVar[bool] = True
    EPS0: ClassVar[float] = 0.0025  # screening's gain floor
    # the task's own Config defaults (a layer between the profile and the user's settings),
    # and per profile name what that profile adds (the released code's per-dataset values)
    PRESET: ClassVar[Mapping[str, Any]] = MappingProxyType({})
    PROFILE_PRESETS: ClassVar[Mapping[str, Mapping[str, Any]]] = MappingProxyType({})
    ANSWER_MARKUP: ClassVar[tuple[str, ...]] = ()  # what the scorer parses (`TaskInfo`)

    splits: Splits
    initial_skill: str
    placement: Placement = field(default=Placement.SYSTEM, converter=Placement.parse)
    max_tokens: int = 4096

    @property
    def info(self) -> TaskInfo:
        return TaskInfo(
            name=self.NAME,
            initial_skill=self.initial_skill,
            success_threshold=self.SOLVED_AT,
            binary=self.BINARY,
            eps0=self.EPS0,
            max_tokens=self.max_tokens,
            preset=self.PRESET,
            profile_presets=self.PROFILE_PRESETS,
            answer_markup=self.ANSWER_MARKUP,
        )

    @classmethod
    def preset_for(cls, profile: str) -> dict[str, Any]:
        """The task's Config values under `profile`, without loading any data."""
        return preset_for(cls.PRESET, cls.PROFILE_PRESETS, profile)

    def split(self, name: str) -> tuple[Sample, ...]:
        return self.splits.get(name)

    def request(self, skill: str, model: str, user_text: str,
                extra_blocks: tuple[Block, ...] = ()) -> Request:
        return target_request(skill=skill, user_text=user_text, model=model,
                              max_tokens=self.max_tokens, placement=self.placement,
                              extra_blocks=extra_blocks)


@frozen(kw_only=True)
class SingleTurnTask(BenchmarkTask):
    """One request per sample: the user turn of `user_text`, then `extra_blocks` (an image)."""

    def requests(self, skill: str, sample: Sample, model: str) -> tuple[Request, ...]:
        return (self.request(skill, model, self.user_text(sample), self.extra_blocks(sample)),)

    def user_text(self, sample: Sample) -> str:
        raise NotImplementedError

    def extra_blocks(self, sample: Sample) -> tuple[Block, ...]:
        return ()
