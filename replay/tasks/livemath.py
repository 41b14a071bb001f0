"""Load LiveMathematicianBench in the authors' layout:
`<data>/LiveMathematicianBench/{train,test}/{tasks.jsonl, labels.jsonl, task_ids.json}`.
Samples follow task_ids.json order; strata = month (from strata_meta_train.json when present).
"""

from __future__ import annotations

from pathlib import Path

from replay.tasks import files
from replay.tasks.benchmark import load_benchmark
from stratune_core.records.base import Sample
from stratune_core.records.errors import TaskDataError
from stratune_core.tasks.livemath import LABELS, LiveMathItem, LiveMathOpusTask, LiveMathTask

FOLDER = "LiveMathematicianBench"


def _choices(raw: list, where: str) -> tuple[tuple[str, str], ...]:
    out = []
    for k, choice in enumerate(raw):
        label = files.field(choice, "label", str, f"{where}: choices[{k}]")
        if label not in LABELS:
            raise TaskDataError(f"{where}: field choices[{k}].label: unknown label {label!r}; use A-E")
        out.append((label, files.field(choice, "text", str, f"{where}: choices[{k}]")))
    if not out:
        raise TaskDataError(f"{where}: field 'choices': empty")
    return tuple(out)


def load_split(root: Path, split: str, strata: dict[str, str]) -> tuple[Sample, ...]:
    folder = root / FOLDER / split
    ids = files.id_list(folder / "task_ids.json")
    tasks_path, labels_path = folder / "tasks.jsonl", folder / "labels.jsonl"
    tasks = {}
    for lineno, row in files.read_jsonl(tasks_path, "LiveMath tasks file"):
        where = f"{tasks_path}:{lineno}"
        tid = str(files.field(row, "id", (str, int), where))
        tasks[tid] = (
            files.field(row, "question", str, where),
            _choices(files.field(row, "choices", list, where), where),
            str(row.get("month", "")),
        )
    labels = {}
    for lineno, row in files.read_jsonl(labels_path, "LiveMath labels file"):
        where = f"{labels_path}:{lineno}"
        tid = str(files.field(row, "id", (str, int), where))
        label = files.field(row, "correct_label", str, where)
        if tid in tasks and label not in {lab for lab, _ in tasks[tid][1]}:
            raise TaskDataError(
                f"{where}: field 'correct_label': unknown label {label!r} for task {tid}"
            )
        labels[tid] = (label, str(row.get("correct_text", "")))
    samples = []
    for tid in ids:
        if tid not in tasks:
            raise TaskDataError(f"{tasks_path}: task {tid!r} of task_ids.json is missing")
        if tid not in labels:
            raise TaskDataError(f"{labels_path}: label of task {tid!r} is missing")
        question, choices, month = tasks[tid]
        item = LiveMathItem(
            question=question,
            choices=choices,
            correct_label=labels[tid][0],
            correct_text=labels[tid][1],
            month=month,
        )
        samples.append(Sample(id=tid, stratum=strata.get(tid, "all"), payload=item))
    return files.non_empty(samples, folder)


def load(
    data_dir: str | Path | None, *, placement: str = "system", limit: int | None = None
) -> LiveMathTask:
    return load_benchmark(LiveMathTask, data_dir, strata=("month",), load_split=load_split,
                          placement=placement, limit=limit)


def load_opus(
    data_dir: str | Path | None, *, placement: str = "system", limit: int | None = None
) -> LiveMathOpusTask:
    """`livemath_opus`: the same data as `livemath`, with the Opus setting's presets."""
    task = load(data_dir, placement=placement, limit=limit)
    return LiveMathOpusTask(splits=task.splits, initial_skill=task.initial_skill,
                            placement=task.placement, max_tokens=task.max_tokens)
