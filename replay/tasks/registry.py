"""`load_task(spec)`: the one entry point the CLI and the runner use to get a `Task`.

spec: `livemath` (or `livemath_opus`: its presets for the Opus setting), `docvqa`, `mind2web`,
`spreadsheetbench` (read from `data_dir`, default env STRATUNE_DATA), `demo` (bundled),
`reasoning-gym:<dataset>[?n_train=..&n_test=..&seed=..]`, or a path to a custom task (`.jsonl`
file or a directory with train.jsonl/test.jsonl; see `replay.tasks.custom`). `limit` keeps the
first `limit` samples of each split.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from replay.tasks import custom, demo, docvqa, livemath, mind2web, reasoning_gym, spreadsheet
from stratune_core.errors import ConfigError
from stratune_core.task import Task
from stratune_core.tasks.docvqa import DocVQATask
from stratune_core.tasks.livemath import LiveMathOpusTask, LiveMathTask
from stratune_core.tasks.mind2web import Mind2WebTask

BENCHMARKS = {
    "livemath": livemath.load,
    "livemath_opus": livemath.load_opus,
    "docvqa": docvqa.load,
    "mind2web": mind2web.load,
    "spreadsheetbench": spreadsheet.load,
}
NAMES = (*BENCHMARKS, "demo", "reasoning-gym:<dataset>", "<path>.jsonl", "<dir>")
# a benchmark's Config presets are the class's own: `plan --show-config` needs no data for them
PRESETS: dict[str, Callable[[str], dict[str, Any]]] = {
    "livemath": LiveMathTask.preset_for,
    "livemath_opus": LiveMathOpusTask.preset_for,
    "mind2web": Mind2WebTask.preset_for,
    "docvqa": DocVQATask.preset_for,
    "spreadsheetbench": lambda _profile: {},
}


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
    if ("/" in spec or spec.endswith(".jsonl")) and not Path(spec).expanduser().exists():
        raise ConfigError(f"task: {spec} not found; give a custom task's JSONL file or "
                          f"directory, or one of {', '.join(NAMES)}")
    if scorer is not None and not _is_custom(spec):
        raise ConfigError(f"scorer: only custom JSONL tasks take a scorer (task {spec!r}); "
                          "drop --scorer, or give --task a .jsonl file or a folder of them")
    if spec in BENCHMARKS:
        return BENCHMARKS[spec](data_dir, placement=placement, limit=limit)
    if spec == "demo":
        return demo.load(placement=placement, limit=limit)
    if spec.startswith("reasoning-gym:"):
        return reasoning_gym.load(spec, placement=placement, limit=limit)
    if _is_custom(spec):
        return custom.load(spec, scorer=scorer, placement=placement, limit=limit)
    raise ConfigError(f"task: unknown task {spec!r}; use one of {', '.join(NAMES)}")


def _is_custom(spec: str) -> bool:
    path = Path(spec).expanduser()
    return spec.endswith(".jsonl") or path.is_dir()
