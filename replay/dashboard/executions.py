"""The failures the optimizer was shown: the current skill's executions on the round's batch,
read back from the run's own cache (read-only, strict: a call it does not hold is never sent)
and scored by the task, as feedback preparation read them.

The events name the batch and count what was shown (`BatchExecuted`, `FeedbackPrepared`); the
inputs, replies and expected answers are in the task and the cache. When either cannot be
read (a benchmark whose data is not on this machine, a run without its cache) the page says
so in one line and shows what the events hold."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from llm_cache.client import CachedLLM
from llm_cache.modes import Mode
from llm_cache.reader import CacheReader
from llm_cache.records import Response
from replay.rundir.serde import Manifest
from stratune_core.records.base import Sample, Score, is_solved
from stratune_core.records.errors import StraTuneError
from stratune_core.records.task import Task
from stratune_core.tasks.executions import run_jobs

Key = tuple[str, tuple[str, ...]]


class FailureReader:
    """Opened once per page (or once per `serve`): the task and the cache, and every batch it
    has read, so that a live page reads each batch once."""

    def __init__(self, path: Path, manifest: Manifest) -> None:
        self.note = ""
        self._memo: dict[Key, list[dict[str, Any]] | None] = {}
        self._runs: dict[tuple[str, str], tuple[Sample, Score, tuple[Response, ...]]] = {}
        self._task: Task | None = None
        self._llm: CachedLLM | None = None
        self._samples: Mapping[str, Sample] = {}
        self._model = manifest.config.target_model
        try:
            from replay.models import specs as models

            self._task = models.load_task(manifest.task, toolbox=manifest.toolbox)
            self._samples = {s.id: s for s in self._task.split("train")}
            info = self._task.info
            self._threshold = (info.success_threshold if manifest.config.success_threshold
                               is None else manifest.config.success_threshold)
            self._llm = CachedLLM(CacheReader(path / "cache"), backends={}, mode=Mode.REPLAY)
        except (StraTuneError, OSError, sqlite3.Error) as exc:
            self.note = f"the failures' inputs and replies cannot be shown: {_line(exc)}"
            self.close()

    def batch(self, skill_text: str, skill_id: str, sample_ids: tuple[str, ...]
              ) -> list[dict[str, Any]] | None:
        """Every unsolved sample of the batch under the skill, in batch order; None when the
        cache does not hold the batch (yet: a live run writes it as the round goes)."""
        key = (skill_id, sample_ids)
        if key in self._memo:
            return self._memo[key]
        if self._task is None or self._llm is None:
            return None
        try:
            samples = [self._samples[sid] for sid in sample_ids]
            calls = run_jobs(self._task, self._llm, self._model,
                             [(skill_text, sample) for sample in samples])
        except (StraTuneError, KeyError, sqlite3.Error):
            return None  # not memoised: the cache may hold it on the next look
        failures = []
        for sample, call in zip(samples, calls, strict=True):
            score = self._task.score(sample, call.responses)
            if not is_solved(score.value, self._threshold):
                failures.append({"sample": sample.id, "input": self._task.describe(sample),
                                 "reply": score.output, "expected": self._task.expected(sample),
                                 "summary": score.summary, "score": score.value})
        self._memo[key] = failures
        return failures

    @property
    def task(self) -> Task | None:
        return self._task

    def execution(self, skill_text: str, skill_id: str, sample_id: str
                  ) -> tuple[Sample, Score, tuple[Response, ...]] | None:
        """One training execution: its sample, score and replies in the order sent; None when
        the cache does not hold it (yet)."""
        key = (skill_id, sample_id)
        if key in self._runs:
            return self._runs[key]
        sample = self._samples.get(sample_id)
        if self._task is None or self._llm is None or sample is None:
            return None
        try:
            (calls,) = run_jobs(self._task, self._llm, self._model, [(skill_text, sample)])
        except (StraTuneError, sqlite3.Error):
            return None  # not memoised: the cache may hold it on the next look
        found = (sample, self._task.score(sample, calls.responses), calls.responses)
        self._runs[key] = found
        return found

    def close(self) -> None:
        if self._llm is not None:
            self._llm.close()
            self._llm = None


def _line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
