"""Scoring a skill on a task split (test by default) through the cache, with a progress bar.

Test-set evaluation is not part of the training budget (docs/design.md, "Budget"). It is how
a learned skill is reported, and how a skill learned with one target is tried on another (the
paper's RQ4).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from attrs import field, frozen
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from stratune_core.records.base import Sample, is_solved
from stratune_core.records.errors import TaskDataError
from stratune_core.records.llm import LLM
from stratune_core.records.task import Task
from stratune_core.round.execute import score_jobs

CHUNK = 16  # samples per batch of requests: big enough for concurrency, small for a live bar


@frozen(kw_only=True)
class SplitScore:
    split: str
    n: int
    mean: float
    solved: int
    scores: tuple[float, ...] = field(converter=tuple)


def score_skill(
    task: Task, skill: str, llm: LLM, model: str, *, split: str = "test",
    on_progress: Callable[[int], None] | None = None,
) -> SplitScore:
    samples: Sequence[Sample] = task.split(split)
    if not samples:
        raise TaskDataError(f"task {task.info.name}: the {split!r} split is empty; add {split} "
                            "rows (test.jsonl, lines with \"split\": \"test\", or test=[...] in "
                            "Python), or score another split (--split train)")
    scores: list[float] = []
    for start in range(0, len(samples), CHUNK):
        chunk = samples[start:start + CHUNK]
        scores.extend(s.value for s in score_jobs(task, llm, model, [(skill, x) for x in chunk]))
        if on_progress is not None:
            on_progress(len(chunk))
    threshold = task.info.success_threshold
    return SplitScore(split=split, n=len(scores), mean=sum(scores) / len(scores),
                      solved=sum(1 for s in scores if is_solved(s, threshold)), scores=scores)


def score_with_bar(
    task: Task, skill: str, llm: LLM, model: str, console: Console, *, split: str = "test",
    label: str = "evaluating",
) -> SplitScore:
    if not console.is_terminal:  # a transient bar: nothing to show, only a thread to run
        return score_skill(task, skill, llm, model, split=split)
    total = len(task.split(split))
    with Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True) as progress:
        bar = progress.add_task(label, total=total)
        return score_skill(task, skill, llm, model, split=split,
                           on_progress=lambda k: progress.advance(bar, k))
