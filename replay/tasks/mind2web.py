"""Load Mind2Web in the authors' layout: `<data>/Mind2Web/train/tasks.jsonl` (one record per
line) and `<data>/Mind2Web/test/tasks.json` (a JSON array), each beside `task_ids.json`.
Samples follow task_ids.json order; strata = website|steps_bucket from strata_meta_train.json.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replay.tasks import files
from replay.tasks.benchmark import load_benchmark
from stratune_core.records.base import Sample
from stratune_core.records.errors import TaskDataError
from stratune_core.tasks.mind2web import Mind2WebTask
from stratune_core.tasks.mind2web_records import Mind2WebItem, parse_record

FOLDER = "Mind2Web"


def records_from_array(path: Path) -> tuple[Mind2WebItem, ...]:
    """Parse a JSON array of task records (the test split's `tasks.json` and its subsets)."""
    raw = files.read_json(path, "Mind2Web tasks file")
    if not isinstance(raw, list):
        raise TaskDataError(f"{path}: expected a JSON array of task records")
    return tuple(parse_record(r, where=f"{path}: record {k}") for k, r in enumerate(raw))


def records_from_lines(path: Path) -> tuple[Mind2WebItem, ...]:
    return tuple(
        parse_record(r, where=f"{path}:{lineno}") for lineno, r in files.read_jsonl(path)
    )


def _order(items: tuple[Mind2WebItem, ...], folder: Path, source: Path) -> list[Mind2WebItem]:
    by_id: dict[str, Any] = {}
    for item in items:
        if item.annotation_id in by_id:
            raise TaskDataError(f"{source}: duplicate annotation_id {item.annotation_id!r}")
        by_id[item.annotation_id] = item
    ids_path = folder / "task_ids.json"
    if not ids_path.is_file():
        return list(items)
    ids = files.id_list(ids_path)
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise TaskDataError(f"{source}: task {missing[0]!r} of task_ids.json is missing")
    return [by_id[i] for i in ids]


def load_split(root: Path, split: str, strata: dict[str, str]) -> tuple[Sample, ...]:
    folder = root / FOLDER / split
    if split == "train":
        source = files.require_file(folder / "tasks.jsonl", "Mind2Web train tasks.jsonl")
        items = records_from_lines(source)
    else:
        source = files.require_file(folder / "tasks.json", "Mind2Web test tasks.json")
        items = records_from_array(source)
    samples = [
        Sample(id=i.annotation_id, stratum=strata.get(i.annotation_id, "all"), payload=i)
        for i in _order(items, folder, source)
    ]
    return files.non_empty(samples, source)


def load(
    data_dir: str | Path | None, *, placement: str = "system", limit: int | None = None
) -> Mind2WebTask:
    return load_benchmark(Mind2WebTask, data_dir, strata=("website", "steps_bucket"),
                          load_split=load_split, placement=placement, limit=limit)
