"""Turning command-line choices into a `Config` and a `Manifest` (no model calls, no run)."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
from attrs import field, frozen

from llm_cache.backends.bedrock import resolve_spec
from replay.input_files import (
    number_too_long,
    read_regular,
    refuse_surrogates,
    too_deep,
    too_many_digits,
)
from replay.models.specs import Model, canonical_model, load_task, resolve
from replay.run.method_options import check_settings
from replay.run.provenance import git_revision, harness_versions, package_versions
from replay.rundir.serde import Manifest, ReplayOrigin, TaskSpec, TraceError
from replay.targets.kinds import toolbox_of
from stratune_core.config.knobs import Config
from stratune_core.config.layers import Layer, Layered, layer_config, task_layer
from stratune_core.records.errors import ConfigError, StraTuneError
from stratune_core.records.method_spec import MethodSpec, default_method
from stratune_core.records.task import Task
from stratune_core.round.registry import prompt_version_of
from stratune_core.selection.selectors.scripted import ReplaySequence, recorded_strategies
from stratune_core.state.events import OperatorChosen, RoundStarted

MAX_BUDGET = 10**9  # target executions: far beyond any run (the paper's budgets are 6x |train|)


@frozen(kw_only=True)
class RunOptions:
    """Everything `stratune train` was asked to do."""

    task: TaskSpec
    target: str
    optimizer: str
    seed: int = 0
    profile: str = "paper"
    config_file: str | None = None
    overrides: tuple[tuple[str, Any], ...] = field(default=(), converter=tuple)
    data_dir: str | None = None
    method: MethodSpec = field(factory=default_method)

    # Each model spec is resolved once, at its first use (so a bad one is refused where it
    # always was), and that `Model` is what the config, the manifest and the backends read.
    @functools.cached_property
    def target_model(self) -> Model:
        return resolve(self.target)

    @functools.cached_property
    def optimizer_model(self) -> Model:
        return resolve(self.optimizer)


def parse_budget(text: str) -> dict[str, Any]:
    """`300` is an absolute budget, `6x` a multiple of |train|."""
    raw = text.strip().lower()
    try:
        if raw.endswith("x") and math.isfinite(float(raw[:-1])) and float(raw[:-1]) > 0:
            return {"budget": None, "budget_multiplier": float(raw[:-1])}
        if int(raw) > 0:
            return {"budget": int(raw)}
    except ValueError:
        pass
    raise ConfigError(f"--budget: {text!r} is neither N (executions) nor Kx (K times |train|), "
                      "with N and K above 0")


def _file_layer(name: str) -> Layer:
    path = Path(name)
    try:
        data = json.loads(read_regular(path, "--config").decode("utf-8"),
                          parse_constant=lambda name: _not_json(path, name),
                          object_pairs_hook=lambda pairs: _unique_keys(path, pairs))
    except StraTuneError as exc:
        raise ConfigError(str(exc).replace("--config " + str(path) + ": not found",
                                           f"--config: {path} not found")) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"--config {path}: cannot be read as UTF-8 text ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: line {exc.lineno}: not JSON ({exc.msg})") from None
    except ValueError as exc:
        if too_many_digits(exc):
            raise number_too_long(str(path), ConfigError) from None
        raise
    except RecursionError:
        raise ConfigError(str(too_deep(str(path)))) from None
    refuse_surrogates(data, str(path), ConfigError)
    return Layer(where=str(path), values=data)


def _unique_keys(path: Path, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Python's parser keeps the last of two equal keys; a file that sets a field twice is
    refused instead of read one way or the other."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise ConfigError(f"{path}: {key!r} is given twice; keep one")
        data[key] = value
    return data


def _not_json(path: Path, name: str) -> Any:
    """NaN and Infinity are not JSON; Python's parser accepts them unless told not to."""
    raise ConfigError(f"{path}: {name} is not a JSON number; every value must be finite")


def build_config(options: RunOptions, task: Task | None = None) -> Config:
    """The run's Config (`configure`, then the sizes checked against the task), with the model
    specs and a `replay:` selector's recorded sequence. The manifest stores the result: the
    run's effective values. `task` is the loaded task when the caller has it (else it is loaded
    here for its preset)."""
    if task is None:
        task = load_task(options.task, data_dir=options.data_dir)
    layers = configure(options, task_layer(task.info, options.profile))
    check_sizes(layers.layered.config, len(task.split("train")), layers.layered.origins,
                {layer.where for layer in layers.given})
    config = layers.layered.config.replace(
        target_model=canonical_model(options.target_model),
        optimizer_model=canonical_model(options.optimizer_model),
    )
    return with_recorded_sequence(config)


@frozen(kw_only=True)
class Layers:
    """The configuration as assembled: the layers in the order they apply on top of the
    profile, the user's among them (`given`), and the result with each field's origin."""

    preset: Layer
    given: tuple[Layer, ...]
    layered: Layered

    @property
    def applied(self) -> tuple[Layer, ...]:
        return (self.preset, *self.given)


def configure(options: RunOptions, preset: Layer, *, models: bool = False) -> Layers:
    """The one place a configuration is assembled, for a run and for `plan --show-config`
    alike: the profile, then the task's preset, then the --config file, then the flags (later
    layers win, field by field; flat keys are translated once, in `layer_config`), each value
    checked by the same validators, and the user's settings checked against the method. With
    `models`, the flags include the model specs given (`--show-config` may go without them)."""
    given = tuple(user_layers(options, models=models))
    check_settings(options.method, list(given))  # a --config file's, a grid's, the API's
    return Layers(preset=preset, given=given,
                  layered=layer_config(options.profile, [preset, *given]))


def check_sizes(config: Config, n_train: int, origins: Mapping[str, str],
                given: set[str]) -> None:
    """Sizes no run can use, refused before anything is made: a budget beyond `MAX_BUDGET`
    target executions, and more batches than training samples when the user asked for them (a
    task's preset may ask for more; the run then makes one batch per sample)."""
    budget = config.budget if config.budget is not None else config.budget_multiplier * n_train
    if budget > MAX_BUDGET:
        where = origins.get("budget" if config.budget is not None else "budget_multiplier", "")
        raise ConfigError(f"budget: {budget:.4g} target executions ({where}) is more than any "
                          f"run can spend; give at most {MAX_BUDGET:.0e}, e.g. --budget 6x")
    if config.n_batches > n_train and origins.get("n_batches") in given:
        raise ConfigError(f"n_batches: {config.n_batches} batches ({origins['n_batches']}) but "
                          f"the task has {n_train} training samples; give at most {n_train}")


def user_layers(options: RunOptions, *, models: bool = False) -> list[Layer]:
    """The --config file (if any), then the command line's flags; with `models`, the flags
    include the model specs given (`plan --show-config`, which may go without them)."""
    layers = []
    if options.config_file is not None:
        layers.append(_file_layer(options.config_file))
    flags = {**dict(options.overrides), "seed": options.seed}
    for name, spec in (("target_model", options.target), ("optimizer_model", options.optimizer)):
        if models and spec:
            flags[name] = canonical_model(getattr(options, name))  # its resolved Model
    layers.append(Layer(where="command line", values=flags))
    return layers


def with_recorded_sequence(config: Config) -> Config:
    """For `selector=replay:<trace>`: the selector with the recorded run's strategies."""
    selector = config.selector
    if not isinstance(selector, ReplaySequence) or selector.strategies:
        return config
    from replay.rundir.trace import RunDir

    source = RunDir.at(selector.trace)
    if not source.exists():
        raise ConfigError(f"selector {selector}: {source.path} holds no recorded run "
                          "(manifest.json not found); give a run directory")
    try:
        _, events = source.read_events()
    except TraceError as exc:
        raise ConfigError(f"selector {selector}: {exc}") from None
    rounds = sum(isinstance(e, RoundStarted) for e in events)
    sequence = recorded_strategies(rounds, (e for e in events if isinstance(e, OperatorChosen)))
    if not any(s is not None for s in sequence):
        raise ConfigError(f"selector {selector}: the trace chose no operators")
    return config.replace(selector=attrs.evolve(selector, strategies=sequence))


def replay_origin(config: Config) -> ReplayOrigin | None:
    """For `selector=replay:<trace>`: which run it follows and both runs' batch orders."""
    selector = config.selector
    if not isinstance(selector, ReplaySequence):
        return None
    from replay.rundir.trace import RunDir

    try:
        recorded = RunDir.at(selector.trace).read_manifest().config
    except TraceError as exc:
        raise ConfigError(f"selector {selector}: {exc}") from None
    return ReplayOrigin(run=selector.trace, recorded_batch_order=recorded.batch_order,
                        batch_order=config.batch_order)


def same_batches_warning(origin: ReplayOrigin | None) -> str | None:
    """One line when a Replay run would deal its batches as the run it follows does."""
    if origin is None or not origin.same_batches:
        return None
    return (f"replay:{origin.run} was recorded with batch order seed {origin.batch_order}, the "
            "one this run uses: it sees the same batches in the same order, so the row measures "
            "nothing (the paper's Replay is a new run with another batch order); pass another "
            "--seed, or set batch_order_seed in --config")


def manifest_spec(model: Model) -> str:
    """What the manifest records of a model spec: as typed, with Bedrock's anthropic_version
    choice written out."""
    return model.text if model.parsed is None else resolve_spec(model.parsed)


def new_manifest(options: RunOptions, config: Config) -> Manifest:
    """The manifest of a new run; a `replay:` selector's sequence is stored beside the config,
    with the run it follows and both batch orders."""
    selector = config.selector
    sequence = selector.strategies if isinstance(selector, ReplaySequence) else ()
    return Manifest(
        replay_of=replay_origin(config),
        task=options.task,
        target=manifest_spec(options.target_model),
        optimizer=manifest_spec(options.optimizer_model),
        seed=config.seed,
        profile=options.profile,
        config=config,
        method=options.method,
        prompt_version=prompt_version_of(options.method),
        replay_sequence=sequence,
        packages=package_versions(options.method) + harness_versions(options.task),
        toolbox=toolbox_of(options.task),
        git_revision=git_revision(),
    )
