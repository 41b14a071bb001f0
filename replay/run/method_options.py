"""`--method`: which command-line options each method has, and the shell's adjustments of a
method's settings to the models it runs with. Checked before anything is spent."""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping, Sequence

from llm_cache.backends.anthropic_backend import AnthropicBackend
from llm_cache.backends.base import Backend, BackendBase
from stratune_core.config.layers import Layer
from stratune_core.records.errors import ConfigError
from stratune_core.records.method_spec import (
    Method,
    MethodSpec,
    default_method,
    default_spec,
    generator_of,
    hybrid_spec,
)
from stratune_core.round.registry import METHODS, entry_of

# Options only StraTune has (its ablations and its profiles): the flag, and the argparse value
# that means "not given".
STRATUNE_ONLY: tuple[tuple[str, str, object], ...] = (
    ("--selector", "selector", None),
    ("--forms", "forms", None),
    ("--operator", "operator", None),
    ("--no-history", "no_history", False),
    ("--no-validation", "no_validation", False),
    ("--no-final-selection", "no_final_selection", False),
    ("--profile", "profile", "paper"),
    ("--generator", "generator", None),
)
# StraTune's operator choice, which a hybrid's generator replaces
REPLACED_BY_GENERATOR: tuple[tuple[str, str], ...] = (
    ("--selector", "selector"), ("--operator", "operator"), ("--forms", "forms"))
REPLACED_FIELDS = tuple(name for _, name in REPLACED_BY_GENERATOR)
# `--max-rounds` sets the Config field a method's entry takes when its steps are rounds.
ROUNDS_FLAG = ("--max-rounds", "max_rounds", None)
ALL_EXTRA: tuple[tuple[str, str, object], ...] = (*STRATUNE_ONLY, ROUNDS_FLAG)


def extra_options(method: Method) -> frozenset[str]:
    """The options `method` has beyond the shared ones (task, models, budget, seed, out, ...):
    StraTune's ablations and profiles for the method that takes every Config field, and
    `--max-rounds` for one whose entry takes `max_rounds`."""
    fields = METHODS[method].config_fields
    if fields is None:
        return frozenset(flag for flag, _, _ in ALL_EXTRA)
    return frozenset({ROUNDS_FLAG[0]}) if ROUNDS_FLAG[1] in fields else frozenset()


def method_from_args(args: argparse.Namespace) -> MethodSpec:
    """The method `--method` names, after checking that every option given is one it has:
    one line naming the option and the method otherwise."""
    name = getattr(args, "method", None)
    spec = default_spec(name) if name else default_method()
    allowed = extra_options(spec.method)
    for flag, name, unset in ALL_EXTRA:
        if flag not in allowed and getattr(args, name, unset) != unset:
            users = sorted(m.value for m in METHODS if flag in extra_options(m))
            raise ConfigError(f"{flag}: --method {spec.method} has no such option (it is an "
                              f"option of --method {' | '.join(users)}); remove it")
    generator = getattr(args, "generator", None)
    if generator is None:
        return spec
    for flag, name in REPLACED_BY_GENERATOR:
        if getattr(args, name, None) is not None:
            raise ConfigError(f"{flag}: --generator {generator} replaces StraTune's operator "
                              "choice, so it has nothing to choose; remove one of them")
    return hybrid_spec(generator)


def settings_of(spec: MethodSpec) -> frozenset[str] | None:
    """The Config fields a user may set for `spec`: None for StraTune (every field)."""
    return entry_of(spec).config_fields


def check_settings(spec: MethodSpec, layers: Sequence[Layer]) -> None:
    """Options a method does not take are refused wherever they come from (a --config file,
    the command line, a grid ablation, the Python API), as the flags are: one line naming the
    field, where it was set, and the method."""
    allowed = settings_of(spec)
    for layer in layers:
        if not isinstance(layer.values, Mapping):
            continue  # refused by the layering, with its own message
        for key in layer.values:
            name = str(key).partition(".")[0]
            if allowed is not None and name not in allowed:
                raise ConfigError(f"{layer.where}: {name}: --method {spec.method} has no such "
                                  f"setting (it takes {', '.join(sorted(allowed))}); remove it")
            if (generator := generator_of(spec)) is not None and name in REPLACED_FIELDS:
                raise ConfigError(f"{layer.where}: {name}: --generator {generator} "
                                  "replaces StraTune's operator choice, so it has nothing to "
                                  "choose; remove one of them")


def check_budget(spec: MethodSpec, budget: int, n_train: int) -> None:
    """A baseline's budget pays for one step, as StraTune's pays for one round; checked before
    anything is spent."""
    smallest = entry_of(spec).minimum_budget
    if smallest is None:
        return  # StraTune checks that its budget pays for a round (`plan`, the run's shape)
    need = smallest(spec, n_train)
    if budget < need:
        raise ConfigError(f"budget: {budget} executions cannot pay for one step of --method "
                          f"{spec.method} on {n_train} training samples; raise --budget to at "
                          f"least {need}")


def fit_method(spec: MethodSpec, target: Backend) -> MethodSpec:
    """The method's settings as the run records them for this target (its entry's `fit`)."""
    fit = entry_of(spec).fit
    return spec if fit is None else fit(spec, takes_temperature(target))


# Claude models that answer a sampling parameter with HTTP 400 whatever the API version
# (Opus 4.7 and later, the 5.x families).
_NO_TEMPERATURE = re.compile(r"opus-4-[7-9]|opus-[5-9]|sonnet-[5-9]|haiku-[5-9]|fable|mythos")
_OLD_BEDROCK_VERSION = "bedrock-2023-05-31"


def takes_temperature(backend: Backend) -> bool:
    """Whether a request's temperature reaches the model without an error. A backend may say
    so itself (`accepts_temperature`). The Claude API under the version the installed SDK
    (2.x) sends rejects every sampling parameter; Bedrock's invoke endpoint with the legacy
    body version takes it for models older than Opus 4.7. Other backends take it."""
    declared = backend.accepts_temperature if isinstance(backend, BackendBase) else None
    if declared is not None:
        return bool(declared)
    if isinstance(backend, AnthropicBackend):
        return (backend.anthropic_version == _OLD_BEDROCK_VERSION
                and _NO_TEMPERATURE.search(backend.model) is None)
    return True
