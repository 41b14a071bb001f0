"""The `stratune` command with the toy world plugged in: `python -m tests.support.cli ARGS`.

The tests inject their doubles here; the package itself ships none. `toy_extensions()` adds
the model kind `scripted:<name>` (`scripted:toy-target`, `scripted:toy-optimizer?style=good`;
`scripted:agent-target` and `scripted:agent-optimizer` for agent episodes, agent_world.py)
and the tasks `toy`, `toy-continuous` (half credit for a right answer in the wrong letter
case) and `toy-solvable` (continuous, without the [X] words no rule teaches: a skill can solve
every sample); `--limit N` sets the training-set size, default 48. The same object
serves in-process tests: `with models.using(toy_extensions()): ...`.

Fault hooks for the subprocess tests (read here, on the test side): with
`STRATUNE_TEST_KILL_AFTER=N` (or `_INTERRUPT_AFTER`, `_TERMINATE_AFTER`) in the environment the
toy target sends its own process SIGKILL (SIGINT, SIGTERM) on its N-th paid call. With
`STRATUNE_TEST_HOLD=FILE` it stops at its `STRATUNE_TEST_HOLD_AT`-th call (default 1), creates
`FILE.waiting` and waits until FILE is deleted: a run held open while a test looks at it.
"""

from __future__ import annotations

import gc
import io
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from rich.console import Console

from llm_cache.backends import Backend
from llm_cache.backends.function import FunctionBackend
from replay.commands import app
from replay.models import specs as models
from replay.models.specs import Extensions, ModelKind
from replay.rundir.serde import TaskSpec
from stratune_core.records.errors import ConfigError
from tests.support.toy import ToyOptimizer, ToyTask
from tests.support.toy_methods import MethodOptimizer, method_target

ROOT = Path(__file__).resolve().parents[2]
TOY_RUN = ("--task", "toy", "--target", "scripted:toy-target", "--optimizer",
           "scripted:toy-optimizer")
SIGNAL_HOOKS = {"STRATUNE_TEST_KILL_AFTER": signal.SIGKILL,
                "STRATUNE_TEST_INTERRUPT_AFTER": signal.SIGINT,
                "STRATUNE_TEST_TERMINATE_AFTER": signal.SIGTERM}


def _name(body: str) -> str:
    return body.partition("?")[0]


def _scripted(body: str) -> Backend:
    name, _, query = body.partition("?")
    options = dict(parse_qsl(query))
    fn: Callable[..., Any]
    if name == "toy-target":
        fn = method_target  # toy_target, plus answers to Iter-CoT's turns
        for env, sig in SIGNAL_HOOKS.items():
            if after := int(os.environ.get(env, "0") or 0):
                fn = _signal_after(fn, after, sig)
        if hold := os.environ.get("STRATUNE_TEST_HOLD"):
            fn = _hold_at(fn, int(os.environ.get("STRATUNE_TEST_HOLD_AT", "1")), Path(hold))
    elif name == "toy-optimizer":
        # the baselines' prompts get the toy's answers too; StraTune's go to the ToyOptimizer
        fn = MethodOptimizer(stratune=ToyOptimizer(style=options.get("style", "mixed")))
    elif name in ("agent-target", "agent-optimizer"):  # tests/support/agent_world.py
        from tests.support.agent_world import agent_optimizer, agent_target

        fn = agent_target if name == "agent-target" else agent_optimizer
        for env, sig in SIGNAL_HOOKS.items():
            if name == "agent-target" and (after := int(os.environ.get(env, "0") or 0)):
                fn = _signal_after(fn, after, sig)
    else:
        raise ConfigError(f"scripted model {name!r}: use toy-target or toy-optimizer")
    return FunctionBackend(fn, name=name)


def _signal_after(fn: Callable[..., Any], calls: int, sig: signal.Signals) -> Callable[..., Any]:
    count = 0

    def wrapped(request: Any) -> Any:
        nonlocal count
        count += 1
        if count == calls:
            os.kill(os.getpid(), sig)
        return fn(request)

    return wrapped


def _hold_at(fn: Callable[..., Any], calls: int, hold: Path) -> Callable[..., Any]:
    count = 0

    def wrapped(request: Any) -> Any:
        nonlocal count
        count += 1
        if count == calls:
            # written whole, then renamed: a test that sees the marker can read the pid in it
            partial = hold.with_name(hold.name + ".waiting.part")
            partial.write_text(str(os.getpid()))
            partial.replace(hold.with_name(hold.name + ".waiting"))
            deadline = time.monotonic() + 120
            while hold.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
        return fn(request)

    return wrapped


def _toy_task(spec: TaskSpec) -> ToyTask:
    if spec.scorer is not None:  # as the built-in tasks do
        raise ConfigError(f"scorer: only custom JSONL tasks take a scorer (task {spec.spec!r}); "
                          "drop --scorer, or give --task a .jsonl file or a folder of them")
    if spec.limit is not None and spec.limit < 1:
        raise ConfigError(f"limit: must be >= 1, got {spec.limit}; give --limit 1 or more")
    if spec.spec == "toy-solvable":
        return ToyTask(n_train=spec.limit or 48, continuous=True, markers=("U", "R", "D", "P"))
    return ToyTask(n_train=spec.limit or 48, continuous=spec.spec == "toy-continuous")


def toy_extensions() -> Extensions:
    return Extensions(models={"scripted": ModelKind(canonical=_name, backend=_scripted)},
                      tasks={"toy": _toy_task, "toy-continuous": _toy_task,
                             "toy-solvable": _toy_task})


def stratune(*args: str, cwd: Path = ROOT, timeout: float = 300,
             **env: str) -> subprocess.CompletedProcess[str]:
    """`stratune ARGS` in a subprocess with the toy world plugged in (from any directory)."""
    full_env = {**os.environ, "COLUMNS": "100", **env}
    full_env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-m", "tests.support.cli", *args], cwd=cwd,
                          env=full_env, capture_output=True, text=True, timeout=timeout,
                          check=False)


def record_in_process(out: Path, *, seed: int = 3, test_split: str | None = None,
                      n_train: int | None = None, method: Any = None, **overrides: Any) -> Path:
    """The run `stratune train --task toy ... --seed 3` records, without a subprocess;
    `overrides` are Config fields, as flags would set them; `method` a `MethodSpec`."""
    from replay.run import runner
    from replay.run.options import RunOptions
    from stratune_core.records.method_spec import StraTuneMethod

    options = RunOptions(task=TaskSpec(spec="toy", limit=n_train), target="scripted:toy-target",
                         optimizer="scripted:toy-optimizer", seed=seed,
                         overrides=tuple(overrides.items()), method=method or StraTuneMethod())
    with models.using(toy_extensions()):
        code = runner.train(options, str(out), Console(file=io.StringIO(), width=100),
                            test_split=test_split)
    assert code == runner.EXIT_OK
    gc.collect()  # the cache's worker-thread SQLite connection closes when collected
    return out


def main(argv: Sequence[str] | None = None) -> int:
    return app.main(argv, extensions=toy_extensions())


if __name__ == "__main__":
    if os.environ.get("STRATUNE_TEST_INTERRUPT_AFTER"):
        # the simulated Ctrl-C needs the handler a terminal gives: a suite started in the
        # background hands its children SIGINT ignored
        signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())
