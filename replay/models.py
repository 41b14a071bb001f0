"""Model specs and task specs as the CLI resolves them, including the hidden test hooks.

With `STRATUNE_TEST_HOOKS=1` in the environment (and only then), the spec `scripted:<name>`
names a scripted model and the task spec `toy` the toy task, both taken from the test suite's
`tests/support/toy.py` (imported from the working directory). The package itself ships no test
doubles; without the variable these specs are ordinary unknown specs.
"""

from __future__ import annotations

import importlib
import os
import signal
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from llm_cache.backends import Backend, backend_for
from llm_cache.backends.function import FunctionBackend
from llm_cache.records import Role
from llm_cache.spec import parse_spec
from replay.serde import TaskSpec
from stratune_core.errors import ConfigError
from stratune_core.task import Task

HOOKS_ENV = "STRATUNE_TEST_HOOKS"
HOOKS_MODULE = "tests.support.toy"
SCRIPTED = "scripted:"
KILL_ENV = "STRATUNE_TEST_KILL_AFTER"  # hooks only: SIGKILL on this paid target call
INTERRUPT_ENV = "STRATUNE_TEST_INTERRUPT_AFTER"  # hooks only: SIGINT (Ctrl-C) on this call
TERMINATE_ENV = "STRATUNE_TEST_TERMINATE_AFTER"  # hooks only: SIGTERM on this call


def hooks_enabled() -> bool:
    return os.environ.get(HOOKS_ENV) == "1"


def _hooks() -> Any:
    try:
        return importlib.import_module(HOOKS_MODULE)
    except ImportError as exc:
        raise ConfigError(
            f"{HOOKS_ENV}=1 but {HOOKS_MODULE} cannot be imported ({exc}); run from the repo root"
        ) from None


def _scripted(spec: str) -> tuple[str, dict[str, str]]:
    name, _, query = spec.removeprefix(SCRIPTED).partition("?")
    return name, dict(parse_qsl(query))


def canonical_model(spec: str) -> str:
    """The model id that goes into requests (and so into the cache key)."""
    if spec.startswith(SCRIPTED) and hooks_enabled():
        name, _ = _scripted(spec)
        return name
    return parse_spec(spec).canonical


def build_backend(spec: str) -> Backend:
    if spec.startswith(SCRIPTED) and hooks_enabled():
        name, options = _scripted(spec)
        toy = _hooks()
        makers: dict[str, Callable[[], Callable[..., Any]]] = {
            "toy-target": lambda: toy.toy_target,
            "toy-optimizer": lambda: toy.ToyOptimizer(style=options.get("style", "mixed")),
        }
        if name not in makers:
            raise ConfigError(f"scripted model {name!r}: use one of {', '.join(makers)}")
        fn = makers[name]()
        if name == "toy-target":
            for env, sig in ((KILL_ENV, signal.SIGKILL), (INTERRUPT_ENV, signal.SIGINT),
                             (TERMINATE_ENV, signal.SIGTERM)):
                if after := int(os.environ.get(env, "0") or 0):
                    fn = _signal_after(fn, after, sig)
        return FunctionBackend(fn, name=name)
    return backend_for(spec)


def _signal_after(fn: Callable[..., Any], calls: int, sig: signal.Signals) -> Callable[..., Any]:
    """Test hook: the process sends itself `sig` once, on paid target call number `calls`."""
    count = 0

    def wrapped(request: Any) -> Any:
        nonlocal count
        count += 1
        if count == calls:
            os.kill(os.getpid(), sig)
        return fn(request)

    return wrapped


def backends(target: str, optimizer: str) -> dict[Role, Backend]:
    return {Role.TARGET: build_backend(target), Role.OPTIMIZER: build_backend(optimizer)}


def load_task(spec: TaskSpec, *, data_dir: str | None = None) -> Task:
    if spec.spec == "toy" and hooks_enabled():
        toy = _hooks()
        n_train = spec.limit or 48
        return toy.ToyTask(n_train=n_train)
    from replay.tasks.registry import load_task as registry_load

    return registry_load(spec.spec, data_dir=data_dir, scorer=spec.scorer,
                         placement=spec.placement, limit=spec.limit)
