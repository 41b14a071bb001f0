"""One table of benchmarks (`replay.tasks.registry.BENCHMARKS`): the `--task` help, the
unknown-task error, `plan --show-config`'s presets and compare's dataset names all come from
it, so a benchmark added there shows up in each."""

from __future__ import annotations

import pytest

from replay.commands.app import build_parser
from replay.compare.runs import DATASETS
from replay.tasks.registry import BENCHMARKS, load_task
from stratune_core.records.errors import ConfigError


def _task_help() -> str:
    parser = build_parser()
    train = next(a for a in parser._subparsers._actions  # type: ignore[union-attr]
                 if a.dest == "command").choices["train"]
    return next(a.help for a in train._actions if a.dest == "task")


def test_the_task_help_and_the_unknown_task_error_name_every_benchmark():
    shown = _task_help()
    with pytest.raises(ConfigError) as caught:
        load_task("no-such-task")
    for name in ("demo", *BENCHMARKS):
        assert name in shown.split(" | ")
        assert name in str(caught.value)


def test_compare_names_the_labelled_benchmarks_in_the_tables_order():
    assert {n: b.label for n, b in BENCHMARKS.items() if b.label is not None} == DATASETS
    assert list(DATASETS.values()) == ["DocVQA", "LiveMath", "Mind2Web", "SpreadsheetBench"]
    assert all(callable(b.presets) and b.presets("released") is not None
               for b in BENCHMARKS.values())
