"""Task specs that name another framework's data, read and written in one form.

- `inspect:FILE.py@TASK[?test_fraction=0.5&split_seed=0]`: an Inspect task; the options split
  samples that carry no `metadata["split"]`;
- `hf:PATH[?input=COL&expected=COL&split=COL]`: a Hugging Face dataset on disk (`save_to_disk`,
  or parquet / CSV / JSON files);
- `mlflow:FOLDER`: the prompt templates and records of an `optimize_prompts` call, recorded in
  its run directory (`replay/bridges/mlflow_task.py`).

A run stores the spec `normalized` writes: the path absolute (so `replay` and `view` work from
anywhere), every option spelled out with its default, in a fixed order, so the same task is
always the same text and the manifest records how the samples were split. Nothing here
imports the frameworks: the command line parses specs before it loads anything.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlencode

from attrs import frozen

from stratune_core.records.errors import ConfigError

INSPECT, HF, MLFLOW = "inspect:", "hf:", "mlflow:"
# each prefix's loader (`module:function`, imported only for a task of its kind)
LOADERS = {INSPECT: "replay.bridges.inspect_load:load", HF: "replay.bridges.hf_dataset:load",
           MLFLOW: "replay.bridges.mlflow_task:load"}
# the options each kind takes, with their defaults (None: none, the option is left out)
OPTIONS: dict[str, dict[str, str | None]] = {
    INSPECT: {"test_fraction": "0.5", "split_seed": "0"},
    HF: {"input": "input", "expected": "expected", "split": None},
    MLFLOW: {},
}
# the package a kind's loader imports, and the extra that installs it (mlflow: needs none, a
# recorded run replays without MLflow)
NEEDS = {INSPECT: ("inspect_ai", "inspect"), HF: ("datasets", "hf")}
USAGE = {INSPECT: "inspect:FILE.py@TASK", HF: "hf:PATH (a saved dataset, or parquet/CSV/JSON)",
         MLFLOW: "mlflow:FOLDER (made by stratune.mlflow)"}


@frozen(kw_only=True)
class BridgeSpec:
    prefix: str
    path: str
    task: str | None = None  # inspect: the name of the @task in the file
    options: tuple[tuple[str, str], ...] = ()

    def option(self, name: str) -> str | None:
        found = dict(self.options)
        return found[name] if name in found else OPTIONS[self.prefix][name]

    def text(self) -> str:
        head = self.prefix + self.path + ("" if self.task is None else f"@{self.task}")
        return head + (f"?{urlencode(self.options, quote_via=quote)}" if self.options else "")


def kind_of(spec: str) -> str | None:
    """The bridge prefix `spec` starts with, or None for a task of StraTune's own."""
    return next((p for p in LOADERS if spec.startswith(p)), None)


def parse(spec: str) -> BridgeSpec:
    prefix = kind_of(spec)
    if prefix is None:
        raise ConfigError(f"task {spec!r}: not one of {', '.join(LOADERS)}")
    body, _, query = spec[len(prefix):].partition("?")
    task = None
    if prefix == INSPECT:
        body, at, task = body.rpartition("@")
        if not at or not body or not task:
            raise ConfigError(f"task {spec!r}: name the task in the file: {USAGE[INSPECT]}")
    if not body:
        raise ConfigError(f"task {spec!r}: no path; give {USAGE[prefix]}")
    options = parse_qsl(query, keep_blank_values=True)
    for name, value in options:
        if name not in OPTIONS[prefix]:
            allowed = ", ".join(OPTIONS[prefix]) or "none"
            raise ConfigError(f"task {spec!r}: unknown option {name!r}; {prefix} tasks take "
                              f"{allowed}")
        if not value:
            raise ConfigError(f"task {spec!r}: option {name!r} is empty; give it a value")
    if len(dict(options)) != len(options):
        raise ConfigError(f"task {spec!r}: an option is given twice")
    return BridgeSpec(prefix=prefix, path=body, task=task, options=tuple(options))


def normalized(spec: str, *, input_col: str | None = None,
               expected_col: str | None = None) -> str:
    """The spec a run stores: the path absolute, the options with their defaults in the
    table's order; `input_col`/`expected_col` (`--input-col`, `--expected-col`) set hf's
    columns. A spec of no bridge is returned as it is."""
    columns = {"input": input_col, "expected": expected_col}
    if kind_of(spec) is None:
        for name, value in columns.items():
            if value is not None:
                raise ConfigError(f"--{name}-col: only hf: tasks take column names; the task "
                                  f"is {spec!r}")
        return spec
    parsed = parse(spec)
    given = dict(parsed.options)
    for name, value in columns.items():
        if value is None:
            continue
        if parsed.prefix != HF:
            raise ConfigError(f"--{name}-col: only hf: tasks take column names; the task is "
                              f"{spec!r}")
        if name in given and given[name] != value:
            raise ConfigError(f"--{name}-col {value!r}: the task spec already names column "
                              f"{given[name]!r}; give it once")
        given[name] = value
    options = tuple((name, str(given.get(name, default)))
                    for name, default in OPTIONS[parsed.prefix].items()
                    if name in given or default is not None)
    path = str(Path(parsed.path).expanduser().resolve())
    return BridgeSpec(prefix=parsed.prefix, path=path, task=parsed.task,
                      options=options).text()


def missing(prefix: str, exc: ModuleNotFoundError) -> Exception:
    """What to raise for `exc` from a `prefix` task's loader: one line naming the extra when
    the framework it needs is not installed, else `exc` itself."""
    package, extra = NEEDS.get(prefix, ("", ""))
    if not package or (exc.name or "").partition(".")[0] != package:
        return exc
    return ConfigError(f"task: {prefix} tasks need {package}, which is not installed: "
                       f"pip install 'stratune[{extra}]'")


def require(module: str, what: str, extra: str) -> None:
    """Import `module`, or raise one line: `what` needs it, and the extra that installs it (the
    check `stratune.mlflow` and `stratune.inspect` make when they are imported)."""
    try:
        for name in dict.fromkeys((module.partition(".")[0], module)):  # the package first
            importlib.import_module(name)
    except ImportError:
        raise ImportError(f"{what}, which is not installed: pip install 'stratune[{extra}]'") \
            from None
