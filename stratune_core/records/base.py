"""Frozen records the core reasons about: skills, samples, scores, executions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs
from attrs import field, frozen

from llm_cache.records import ToolSpec


def _unit_interval(_inst: object, attribute: attrs.Attribute, value: float) -> None:
    if not (0.0 <= value <= 1.0):
        raise ValueError(f"{attribute.name} must lie in [0, 1], got {value!r}")


@frozen(kw_only=True, hash=False)
class Sample:
    """One training or test sample. `payload` is task-specific JSON-like data."""

    id: str = field(validator=attrs.validators.min_len(1))
    stratum: str = "all"
    payload: Any = None


@frozen(kw_only=True)
class Score:
    """What a task's scorer says about one execution. A failed sample is a score, not an error.

    `output` is the part of the target's answer shown to the optimizer as feedback, `summary`
    the scorer's one-line account of what went wrong (empty when solved), `aux` an optional
    guardrail metric.
    """

    value: float = field(converter=float, validator=_unit_interval)
    output: str = ""
    summary: str = ""
    aux: float | None = None


@frozen(kw_only=True)
class Execution:
    """One logical execution: skill `skill_id` run on sample `sample_id` (a ledger entry)."""

    skill_id: str
    sample_id: str
    score: float = field(validator=_unit_interval)
    solved: bool
    output: str = ""
    summary: str = ""
    aux: float | None = None  # the task's auxiliary metric, when it has one (`Score.aux`)


def _pairs(values: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(dict(values).items()))


Pairs = tuple[tuple[str, Any], ...]


def _nested(values: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> tuple[tuple[str, Pairs], ...]:
    return tuple((name, _pairs(preset)) for name, preset in _pairs(values))


def _by_part(values: Mapping[str, Iterable[str]] | Iterable[tuple[str, Iterable[str]]],
             ) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple((name, tuple(pieces)) for name, pieces in dict(values).items())


@frozen(kw_only=True)
class TaskInfo:
    """Static facts about a task that the rules need.

    `preset` holds the task's own defaults for `Config` fields (LiveMath screens on 24 + 24
    samples, paper Table 5): a config layer between the profile and the user's file and flags
    (`config_layers.task_layer`). `profile_presets` adds values for one profile by name (the
    released code's per-dataset settings: Mind2Web's archive of 8, LiveMath's 6 epochs).
    Stored as sorted pairs so the record stays hashable.
    """

    name: str
    initial_skill: str
    success_threshold: float = field(default=1.0, validator=_unit_interval)
    binary: bool = True
    eps0: float = 0.0025
    max_tokens: int = 4096
    preset: Pairs = field(default=(), converter=_pairs)
    profile_presets: tuple[tuple[str, Pairs], ...] = field(default=(), converter=_nested)
    # The markup the task's scorer parses out of an answer (`<answer>`, `ANSWER:`): the one part
    # of a skill's output format that a revision must keep. Empty: the scorer reads the answer
    # as it is, and the format is the optimizer's to change like any other instruction.
    answer_markup: tuple[str, ...] = field(default=(), converter=tuple)
    # An agent task's tools, shown to the optimizer as the inventory (empty: one model call)
    tools: tuple[ToolSpec, ...] = field(default=(), converter=tuple)
    # How much of an execution's output the optimizer sees (an episode's trajectory: more)
    output_chars: int = 400
    # Text every revision keeps, by part ("" for a one-part skill): the placeholders a template
    # is filled in through (an MLflow prompt's `{{question}}`, an Inspect system message's
    # `{topic}`). A candidate that drops one would lose that input, so it is refused unexecuted.
    placeholders: tuple[tuple[str, tuple[str, ...]], ...] = field(default=(), converter=_by_part)

    def preset_for(self, profile: str) -> dict[str, Any]:
        return preset_for(self.preset, self.profile_presets, profile)


def preset_for(preset: Mapping[str, Any] | Iterable[tuple[str, Any]],
               profile_presets: Mapping[str, Any] | Iterable[tuple[str, Any]],
               profile: str) -> dict[str, Any]:
    """A task's Config values under `profile`: its own, then what the profile adds."""
    return {**dict(preset), **dict(dict(profile_presets).get(profile, ()))}


def is_solved(score: float, threshold: float) -> bool:
    """The dataset's success criterion, with a 1e-9 tolerance (float scores)."""
    return score >= threshold - 1e-9
