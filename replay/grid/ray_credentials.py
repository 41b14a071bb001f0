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

from llm_cache.providers import PROVIDERS, Credentials
from replay.models.specs import Model
from stratune_core.records.errors import ConfigError

PROBE_WAIT_S = 300.0  # a busy cluster may take a while to start a worker


def needs_of(models: Iterable[Model]) -> dict[str, Credentials]:
    """The credentials each model spec (resolved when its cell was checked) reads from the
    environment: its provider's row."""
    found: dict[str, Credentials] = {}
    for model in models:
        parsed = model.parsed
        if parsed is None:
            continue  # a kind added by the embedding program: it knows its own credentials
        need = PROVIDERS[parsed.provider].credentials
        if (need.any_of or need.also) and parsed.option("api_key") is None:
            found[model.text] = need
    return found


def variables(needs: Mapping[str, Credentials]) -> tuple[str, ...]:
    return tuple(sorted({v for n in needs.values() for v in (*n.any_of, *n.also)}))


def passed_env(needs: Mapping[str, Credentials], environ: Mapping[str, str] | None = None
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


def check_workers(ray: Any, needs: Mapping[str, Credentials], runtime_env: Mapping[str, Any] | None
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
