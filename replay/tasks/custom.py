"""Load a custom task from JSONL.

Two layouts, pick either:
- one file `task.jsonl` whose lines each carry `"split": "train" | "test"`;
- a directory holding `train.jsonl` and `test.jsonl` (a `split` field, if present, must match).
Each line: `{"id": ..., "input": "...", "expected": ..., "stratum"?: "...", "image"?: "page.png"}`.
`expected` is a string, a number or a list of accepted answers; `image` is a path relative to
the file. The initial skill is `initial_skill.txt` in the same directory, else a generic one.

Scorer: a built-in name (exact, regex, choice, anls, numeric[:rel_tol]; see
`stratune_core.tasks.custom_scorers`) or `module:function` taking (answer text, expected) and
returning a number in [0, 1]; such a function may set attributes `threshold` (default 1.0) and
`binary` (default False). Every line is checked before anything is returned.
"""

from __future__ import annotations

import base64
import importlib
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from llm_cache.records import Response
from replay.skills.agent_skill import refuse_oversized
from replay.tasks import files
from replay.tasks.docvqa import guard_image
from stratune_core.records.base import Sample
from stratune_core.records.errors import ConfigError, TaskDataError
from stratune_core.tasks.common import Placement, Splits
from stratune_core.tasks.custom import CustomItem, CustomTask
from stratune_core.tasks.custom_scorers import (
    BUILTIN,
    ScoreFn,
    Scorer,
    builtin_scorer,
    golds,
    last_number,
)
from stratune_core.tasks.livemath import LABELS
from stratune_core.tasks.user_exit import no_exit

DEFAULT_SKILL = "Complete the task. Put the final answer inside <answer>...</answer> tags."
SPLITS = ("train", "test")


def import_module(module_name: str) -> object:
    """`module_name`, imported also from the current directory (a `module:function` flag)."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        cwd = os.getcwd()
        if exc.name != module_name.split(".")[0] or cwd in sys.path:
            raise
        # A console script has its own folder, not the user's, on sys.path: look where
        # `--scorer mymodule:fn` was typed, as `python -m` would.
        sys.path.insert(0, cwd)
        return importlib.import_module(module_name)


def resolve_scorer(spec: str) -> Scorer:
    if ":" in spec and not spec.startswith("numeric"):
        module_name, _, attr = spec.partition(":")
        if module_name == "__main__" or "<" in attr:  # a script's, a lambda, a closure
            raise ConfigError(f"scorer: {spec!r} was defined in a script, a notebook or a "
                              "function and cannot be imported; replay the run from Python with "
                              "stratune.replay(DIR, scorer=...), or move the function into a "
                              "module")
        if not all(part.isidentifier() for part in [*module_name.split("."), attr]):
            raise ConfigError(f"scorer: {spec!r}: write module:function (Python names, e.g. "
                              "myscorers:score), or one of exact, regex, choice, anls, numeric")
        try:
            fn = getattr(import_module(module_name), attr)
        except Exception as exc:  # any failure of the user's module is theirs to fix
            raise ConfigError(f"scorer: cannot load {spec!r} ({type(exc).__name__}: {exc}); "
                              "give module:function "
                              "importable from the current directory") from None
        if not callable(fn):
            raise ConfigError(f"scorer: {spec!r} is not callable; name a function (answer, "
                              "expected) -> [0, 1]")
        return function_scorer(fn, spec)
    return builtin_scorer(spec)


def function_scorer(fn: ScoreFn, name: str) -> Scorer:
    """The user's function (answer text, expected) -> [0, 1]; its attributes `binary` and
    `threshold`, if set, say how its scores read."""
    return Scorer(name=name, fn=no_exit(fn), binary=bool(getattr(fn, "binary", False)),
                  threshold=float(getattr(fn, "threshold", 1.0)))


def _check_expected(expected: object, scorer: Scorer, where: str) -> None:
    if expected is None or expected == [] or isinstance(expected, dict):
        raise TaskDataError(f"{where}: field 'expected': give a string, a number or a list")
    if isinstance(expected, list) and not all(isinstance(e, str | int | float) for e in expected):
        raise TaskDataError(f"{where}: field 'expected': a list of accepted answers holds "
                            "strings or numbers only")
    for gold in golds(expected):
        if not gold.strip():
            raise TaskDataError(f"{where}: field 'expected': empty; give the answer that "
                                "counts as right")
        if scorer.name == "regex":
            try:
                re.compile(gold)
            except re.error as exc:
                raise TaskDataError(f"{where}: field 'expected': bad regex ({exc})") from None
        elif scorer.name == "choice" and gold.strip().upper() not in LABELS:
            raise TaskDataError(f"{where}: field 'expected': unknown label {gold!r}; use A-E")
        elif scorer.name.startswith("numeric") and last_number(gold) is None:
            raise TaskDataError(f"{where}: field 'expected': {gold!r} holds no number")


# The fields a task line may hold; any other is a typo ("expcted") that would be ignored.
ROW_FIELDS = ("id", "input", "expected", "stratum", "split", "image")


def _sample(row: object, path: Path, lineno: int, scorer: Scorer) -> tuple[str | None, Sample]:
    where = f"{path}:{lineno}"
    sid = str(files.field(row, "id", (str, int), where))
    assert isinstance(row, dict)
    unknown = sorted(str(k) for k in row if k not in ROW_FIELDS)
    if unknown:
        raise TaskDataError(f"{where}: field {unknown[0]!r}: unknown; a task line holds "
                            f"{', '.join(ROW_FIELDS)}")
    if not sid:
        raise TaskDataError(f"{where}: field 'id': empty")
    text = files.field(row, "input", str, where)
    if not text.strip():
        raise TaskDataError(f"{where}: field 'input': empty; give the text the model answers")
    if "expected" not in row:
        raise TaskDataError(f"{where}: field 'expected': missing")
    _check_expected(row["expected"], scorer, where)
    stratum = row.get("stratum", "all")
    if not isinstance(stratum, str) or not stratum:
        raise TaskDataError(f"{where}: field 'stratum': expected a non-empty string")
    split = row.get("split")
    if split is not None and split not in SPLITS:
        raise TaskDataError(f"{where}: field 'split': unknown split {split!r}; use train or test")
    image = None
    if row.get("image") is not None:
        image_path = path.parent / files.field(row, "image", str, where)
        if not image_path.is_file():
            raise TaskDataError(f"{where}: field 'image': {image_path} not found")
        image = base64.b64encode(guard_image(image_path.read_bytes())).decode("ascii")
    item = CustomItem(input=text, expected=row["expected"], image_b64=image)
    return split, Sample(id=sid, stratum=stratum, payload=item)


def _read(path: Path, scorer: Scorer, forced: str | None) -> dict[str, list[Sample]]:
    return samples_of(files.read_jsonl(path, "custom task file"), path, scorer, forced)


def samples_of(rows: Iterable[tuple[int, Any]], path: Path, scorer: Scorer,
               forced: str | None) -> dict[str, list[Sample]]:
    """The samples of `rows` ((line number, JSON value) as a task file holds them) by split;
    `forced` is the split of a file that holds only one."""
    out: dict[str, list[Sample]] = {s: [] for s in SPLITS}
    seen: dict[str, int] = {}
    for lineno, row in rows:
        split, sample = _sample(row, path, lineno, scorer)
        if forced is not None and split not in (None, forced):
            raise TaskDataError(f"{path}:{lineno}: field 'split': {split!r} in the {forced} file")
        split = forced or split
        if split is None:
            raise TaskDataError(f"{path}:{lineno}: field 'split': missing (use train or test)")
        if sample.id in seen:
            raise TaskDataError(f"{path}:{lineno}: field 'id': {sample.id!r} repeats line {seen[sample.id]}")
        seen[sample.id] = lineno
        out[split].append(sample)
    return out


def load(spec: str | Path, *, scorer: str | Scorer | None = None, placement: str = "system",
         limit: int | None = None, name: str | None = None, max_tokens: int = 1024) -> CustomTask:
    """`scorer`: a name as `--scorer` takes it, or a `Scorer` already built (a Python
    program's own function). A directory's test.jsonl may be empty: a task kept for training
    only (a program's data with no test rows); a single file needs lines of both splits."""
    path = Path(spec).expanduser()
    chosen = scorer if isinstance(scorer, Scorer) else resolve_scorer(scorer or "exact")
    if path.is_dir():
        parts = {s: _read(files.require_file(path / f"{s}.jsonl", f"{s} split"), chosen, s)[s]
                 for s in SPLITS}
        skill_file = path / "initial_skill.txt"
    else:
        parts = _read(path, chosen, None)
        for split in SPLITS:
            _non_empty(parts, split, path)
        skill_file = path.parent / "initial_skill.txt"
    skill = files.read_text(skill_file, "initial skill") if skill_file.is_file() else None
    if skill is not None and not skill.strip():
        raise TaskDataError(f"{skill_file}:1: initial skill: empty (only white space); write "
                            "the skill, or delete the file for the generic one")
    if skill is not None:
        refuse_oversized(skill, f"{skill_file}: initial skill", TaskDataError)
    return task_of(path, parts, chosen, skill, placement=placement, limit=limit,
                   name=name or (path.name if path.is_dir() else path.stem), max_tokens=max_tokens)


def load_rows(folder: Path, rows: dict[str, list[tuple[int, Any]]], *, scorer: Scorer,
              initial_skill: str | None, placement: str = "system",
              limit: int | None = None) -> CustomTask:
    """The task that `load(folder)` reads once `rows` are written there as train.jsonl and
    test.jsonl (and `initial_skill` as initial_skill.txt), built without the files."""
    parts = {s: samples_of(rows[s], folder / f"{s}.jsonl", scorer, s)[s] for s in SPLITS}
    return task_of(folder, parts, scorer, initial_skill, placement=placement, limit=limit,
                   name=folder.name, max_tokens=1024)


def _non_empty(parts: dict[str, list[Sample]], split: str, where: Path) -> None:
    if not parts[split]:
        raise TaskDataError(f"{where}: empty split {split!r}; field 'split' needs at least one "
                            f"{split} line")


def task_of(path: Path, parts: dict[str, list[Sample]], scorer: Scorer, skill: str | None, *,
            placement: str, limit: int | None, name: str, max_tokens: int) -> CustomTask:
    """The task of samples already read by split (also a dataset's rows: `hf:` tasks)."""
    where = path / "train.jsonl" if path.is_dir() or not path.suffix else path
    _non_empty(parts, "train", where)
    task = CustomTask(
        name=name,
        splits=Splits(name=str(path), train=files.limited(tuple(parts["train"]), limit),
                      test=files.limited(tuple(parts["test"]), limit)),
        initial_skill=DEFAULT_SKILL if skill is None else skill.strip(),
        scorer=scorer,
        placement=Placement.parse(placement),
        max_tokens=max_tokens,
    )
    if scorer.name.partition(":")[0] not in BUILTIN:  # module:function, the user's code
        _try_scorer(task)
    return task


def _try_scorer(task: CustomTask) -> None:
    """Call the user's scorer on the first training sample, with its own expected answer and
    with an empty reply, before anything is spent: a scorer that raises or returns something
    other than a number in [0, 1] is refused now, not after the budget is paid."""
    sample = task.split("train")[0]
    item: CustomItem = sample.payload
    for reply in (f"<answer>{golds(item.expected)[0]}</answer>", ""):
        task.score(sample, (Response(text=reply),))
