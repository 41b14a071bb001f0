"""Loading a benchmark task from the data directory: what every benchmark loader shares."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from replay.tasks import files
from stratune_core.records.base import Sample
from stratune_core.tasks.common import BenchmarkTask, Placement, Splits

T = TypeVar("T", bound=BenchmarkTask)
SplitLoader = Callable[[Path, str, dict[str, str]], tuple[Sample, ...]]


def load_benchmark(
    task: type[T], data_dir: str | Path | None, *, strata: tuple[str, ...],
    load_split: SplitLoader, placement: str = "system", limit: int | None = None,
) -> T:
    """`task` with its train and test splits (the first `limit` of each), each sample in its
    stratum (`strata` names the stratum fields), and the initial skill for `task.NAME`."""
    root = files.data_root(data_dir)
    by_id = files.strata(root, task.NAME, strata)
    train = files.limited(load_split(root, "train", by_id), limit)
    test = files.limited(load_split(root, "test", by_id), limit)
    return task(
        splits=Splits(name=task.NAME, train=train, test=test),
        initial_skill=files.initial_skill(root, task.NAME),
        placement=Placement.parse(placement),
    )
