"""`--method`: which command-line options each method has, and the shell's adjustments of a
method's settings to the models it runs with. Checked before anything is spent."""

from __future__ import annotations

import argparse

import attrs

from llm_cache.backends.base import Backend
from stratune_core.errors import ConfigError
from stratune_core.methods.spec import IterCotMethod, Method, MethodSpec, default_spec

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
)
# Options a method has beyond the shared ones (task, models, budget, seed, out, ...).
EXTRA_OPTIONS: dict[Method, frozenset[str]] = {
    Method.STRATUNE: frozenset(flag for flag, _, _ in STRATUNE_ONLY) | {"--max-rounds"},
    Method.TEXTGRAD: frozenset({"--max-rounds"}),
    Method.ITER_COT: frozenset(),
    Method.TRACE2SKILL: frozenset(),
    Method.SKILLOPT: frozenset({"--max-rounds"}),
}
ALL_EXTRA: tuple[tuple[str, str, object], ...] = (*STRATUNE_ONLY, ("--max-rounds", "max_rounds", None))


def method_from_args(args: argparse.Namespace) -> MethodSpec:
    """The method `--method` names, after checking that every option given is one it has:
    one line naming the option and the method otherwise."""
    spec = default_spec(getattr(args, "method", None) or Method.STRATUNE.value)
    allowed = EXTRA_OPTIONS[spec.method]
    for flag, name, unset in ALL_EXTRA:
        if flag not in allowed and getattr(args, name, unset) != unset:
            users = sorted(m.value for m, flags in EXTRA_OPTIONS.items() if flag in flags)
            raise ConfigError(f"{flag}: --method {spec.method} has no such option (it is an "
                              f"option of --method {' | '.join(users)}); remove it")
    return spec


def fit_method(spec: MethodSpec, target: Backend) -> MethodSpec:
    """Iter-CoT samples at temperature 0.7 where the target's backend takes a temperature; a
    backend that says it does not (`accepts_temperature = False`) gets none, and the manifest's
    `temperature: null` records that the calls were made without one."""
    if isinstance(spec, IterCotMethod) and spec.temperature is not None \
            and not getattr(target, "accepts_temperature", True):
        return attrs.evolve(spec, temperature=None)
    return spec
