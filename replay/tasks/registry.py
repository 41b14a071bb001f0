"""`load_task(spec)`: the one entry point the CLI and the runner use to get a `Task`.

spec: `livemath` (or `livemath_opus`: its presets for the Opus setting), `docvqa`, `mind2web`,
`spreadsheetbench` (read from `data_dir`, default env STRATUNE_DATA), `demo`, `dates`,
`codes`, `ledger` and `stock` (bundled), `reasoning-gym:<dataset>[?n_train=..&n_test=..&seed=..]`,
another framework's task (`inspect:FILE.py@TASK`, `hf:PATH`, `mlflow:FOLDER`:
`replay.bridges.specs`), or a path to a custom task (`.jsonl` file or a directory with
train.jsonl/test.jsonl; see `replay.tasks.custom`; a folder named like a built-in task is
`./<name>`). `limit` keeps the first `limit` samples of each split.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from attrs import frozen

from replay.bridges import specs as bridges
from replay.tasks import bundled, custom, reasoning_gym
from stratune_core.records.errors import ConfigError
from stratune_core.records.task import Task
from stratune_core.tasks.docvqa import DocVQATask
from stratune_core.tasks.livemath import LiveMathOpusTask, LiveMathTask
from stratune_core.tasks.mind2web import Mind2WebTask


@frozen(kw_only=True)
class Benchmark:
    """A benchmark read from the data directory: its loader (`module:function`, imported when
    loaded: a reader's libraries load only for its own task), its Config presets per profile
    (the class's own, so `plan --show-config` needs no data) and its name in compare's tables
    (None: the spec itself)."""

    loader: str
    presets: Callable[[str], dict[str, Any]]
    label: str | None = None

    def load(self, data_dir: str | Path | None, **options: Any) -> Task:
        module, _, name = self.loader.partition(":")
        task: Task = getattr(importlib.import_module(module), name)(data_dir, **options)
        return task


# The one table of benchmarks: a new one is its reader module and a row here; the `--task`
# help, the unknown-task error and compare's dataset names come from it.
BENCHMARKS: Mapping[str, Benchmark] = {
    "docvqa": Benchmark(loader="replay.tasks.docvqa:load", presets=DocVQATask.preset_for,
                        label="DocVQA"),
    "livemath": Benchmark(loader="replay.tasks.livemath:load", presets=LiveMathTask.preset_for,
                          label="LiveMath"),
    "livemath_opus": Benchmark(loader="replay.tasks.livemath:load_opus",
                               presets=LiveMathOpusTask.preset_for),
    "mind2web": Benchmark(loader="replay.tasks.mind2web:load", presets=Mind2WebTask.preset_for,
                          label="Mind2Web"),
    "spreadsheetbench": Benchmark(loader="replay.tasks.spreadsheet:load",
                                  presets=lambda _profile: {}, label="SpreadsheetBench"),
}
OTHERS = ("reasoning-gym:<dataset>", "inspect:FILE.py@TASK", "hf:PATH", "<path>.jsonl", "<dir>")
NAMES = (*bundled.BUNDLED, *BENCHMARKS, *OTHERS)
TASK_HELP = " | ".join((*bundled.BUNDLED, *BENCHMARKS, "reasoning-gym:<name>",
                        "inspect:FILE.py@TASK", "hf:PATH")) + " | PATH to a custom JSONL task"
# the benchmarks' names in compare's tables, in the paper's order
DATASETS = {name: b.label for name, b in BENCHMARKS.items() if b.label is not None}


def load_task(
    spec: str,
    *,
    data_dir: str | Path | None = None,
    scorer: str | None = None,
    placement: str = "system",
    limit: int | None = None,
) -> Task:
    if limit is not None and limit < 1:
        raise ConfigError(f"limit: must be >= 1, got {limit}; give --limit 1 or more")
    if data_dir is not None and spec not in BENCHMARKS:  # ignored, it would seem to be read
        raise ConfigError(f"--data: task {spec!r} reads no data directory (only "
                          f"{', '.join(BENCHMARKS)} do); drop --data")
    if (kind := bridges.kind_of(spec)) is not None:  # another framework's task
        if scorer is not None and kind != bridges.HF:
            raise ConfigError(f"scorer: a {kind} task is scored by its own scorer; drop "
                              "--scorer")
        module, _, name = bridges.LOADERS[kind].partition(":")
        try:
            task: Task = getattr(importlib.import_module(module), name)(
                spec, scorer=scorer, placement=placement, limit=limit)
        except ModuleNotFoundError as exc:
            raise bridges.missing(kind, exc) from None
        return task
    if ("/" in spec or spec.endswith(".jsonl")) and not Path(spec).expanduser().exists():
        raise ConfigError(f"task: {spec} not found; give a custom task's JSONL file or "
                          f"directory, or one of {', '.join(NAMES)}")
    if scorer is not None and not _is_custom(spec):
        raise ConfigError(f"scorer: only custom JSONL tasks take a scorer (task {spec!r}); "
                          "drop --scorer, or give --task a .jsonl file or a folder of them")
    if spec in BENCHMARKS:
        return BENCHMARKS[spec].load(data_dir, placement=placement, limit=limit)
    if spec in bundled.BUNDLED:
        return bundled.load(spec, placement=placement, limit=limit)
    if spec.startswith("dspy:"):
        raise ConfigError(f"task {spec}: a DSPy program's run, made from Python with "
                          "stratune.dspy; replay it from Python with the same program and "
                          "examples: StraTune(...).replay(program, trainset=...)")
    if spec.startswith("reasoning-gym:"):
        return reasoning_gym.load(spec, placement=placement, limit=limit)
    if _is_custom(spec):
        return custom.load(spec, scorer=scorer, placement=placement, limit=limit)
    raise ConfigError(f"task: unknown task {spec!r}; use one of {', '.join(NAMES)}")


BUILT_IN = frozenset((*bundled.BUNDLED, *BENCHMARKS))


def custom_path(spec: str) -> Path | None:
    """The custom task `spec` names (a .jsonl file or a folder), or None for a named task. A
    built-in task's name is never read as a path: `demo` is the bundled task even where the
    working directory holds a folder `demo`, which `./demo` names."""
    if spec in BUILT_IN or bridges.kind_of(spec) is not None:
        return None
    path = Path(spec).expanduser()
    return path if spec.endswith(".jsonl") or path.is_dir() else None


def shadowed_folder(spec: str) -> str | None:
    """One line when a built-in task's name is also a folder here: which of the two is taken."""
    if spec not in BUILT_IN or not Path(spec).is_dir():
        return None
    return (f"--task {spec} is the {'bundled' if spec in bundled.BUNDLED else 'benchmark'} task "
            f"{spec!r}, not the folder ./{spec} here; give --task ./{spec} for the folder")


def _is_custom(spec: str) -> bool:
    return custom_path(spec) is not None
