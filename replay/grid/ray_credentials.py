"""Provider credentials for cells on Ray, checked before any cell starts.

A Ray task sees the environment of the `ray start` that started its node, not the driver's: a
key exported in the shell that runs `stratune grid --ray` never reaches the cells. So a probe
task (no CPU reserved) asks a worker which of the variables the grid's models need it can see;
a missing one stops the grid with one line saying where to set it.

`--ray-pass-env` hands this shell's values of those variables to every cell through Ray's
`runtime_env` instead: held in memory by Ray, never written into the grid directory, but shown
by Ray's dashboard and job APIs to whoever can reach them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from llm_cache.errors import SpecError
from llm_cache.spec import parse_spec
from stratune_core.records.errors import ConfigError

PROBE_WAIT_S = 300.0  # a busy cluster may take a while to start a worker


@attrs.frozen
class Need:
    """What one provider reads from the environment: one of `any_of` must be set (none: the
    provider may run without), `also` are passed along when set."""

    any_of: tuple[str, ...]
    also: tuple[str, ...] = ()


# Bedrock's credentials may come from a node's instance role and ollama/vLLM need no key, so
# only the Anthropic API's key is required; the others travel when set.
NEEDS: Mapping[str, Need] = {
    "anthropic": Need(("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"), ("ANTHROPIC_BASE_URL",)),
    "bedrock": Need((), ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                         "AWS_BEARER_TOKEN_BEDROCK", "AWS_REGION", "AWS_DEFAULT_REGION")),
    "openai": Need((), ("OPENAI_API_KEY",)),
}


def needs_of(specs: Iterable[str]) -> dict[str, Need]:
    """The needs of each model spec that reads its credentials from the environment."""
    found: dict[str, Need] = {}
    for spec in specs:
        try:
            parsed = parse_spec(spec)
        except SpecError:
            continue  # a kind added by the embedding program: it knows its own credentials
        need = NEEDS.get(parsed.provider)
        if need is not None and parsed.option("api_key") is None:
            found[spec] = need
    return found


def variables(needs: Mapping[str, Need]) -> tuple[str, ...]:
    return tuple(sorted({v for n in needs.values() for v in (*n.any_of, *n.also)}))


def passed_env(needs: Mapping[str, Need], environ: Mapping[str, str] | None = None
               ) -> dict[str, str]:
    """This shell's values of the variables the grid's models read (`--ray-pass-env`)."""
    env = os.environ if environ is None else environ
    values = {name: env[name] for name in variables(needs) if env.get(name)}
    for spec, need in needs.items():
        if need.any_of and not any(name in values for name in need.any_of):
            raise ConfigError(f"--ray-pass-env: {' or '.join(need.any_of)} (needed by {spec}) "
                              "is not set in this shell either; export it, then run again")
    return values


def _visible(names: tuple[str, ...]) -> dict[str, bool]:
    return {name: bool(os.environ.get(name)) for name in names}


def check_workers(ray: Any, needs: Mapping[str, Need], runtime_env: Mapping[str, Any] | None
                  ) -> None:
    """Raise ConfigError when a Ray worker cannot see a credential the grid needs."""
    required = {spec: need for spec, need in needs.items() if need.any_of}
    if not required:
        return
    names = variables(required)
    options: dict[str, Any] = {"num_cpus": 0}
    if runtime_env:
        options["runtime_env"] = dict(runtime_env)
    seen = ray.get(ray.remote(_visible).options(**options).remote(names), timeout=PROBE_WAIT_S)
    for spec, need in required.items():
        if not any(seen.get(name) for name in need.any_of):
            raise ConfigError(
                f"Ray workers do not see {' or '.join(need.any_of)} (needed by {spec}): set it "
                "in the environment of `ray start` on every node, or rerun with --ray-pass-env "
                "to hand this shell's value to the cells through Ray's runtime_env (Ray's "
                "dashboard can show it)")
