"""A custom task given as Python data instead of JSONL files.

Rows are dicts with the fields of a task file's lines (`input`, `expected`, optional `id`,
`stratum`, `split`) or `(input, expected)` pairs; ids default to the row's position. The scorer
is a built-in name or a function (answer text, expected) -> [0, 1].

A run records the rows as a task directory inside its run directory,
`OUT/task/<digest>/<name>/` (train.jsonl, test.jsonl, initial_skill.txt), and the run's task
spec names that directory: `stratune replay OUT` reloads it like any JSONL task. The digest of
the rows is part of the path, so other rows are another task, and a rerun with them is refused
as a different run instead of resuming this one. The task itself is built from the rows after a
JSON round trip, through the same code that reads task files, so the recorded files and the
task the run used are the same samples.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import xxhash
from attrs import field, frozen

from replay.rundir.serde import TaskSpec
from replay.skills.agent_skill import refuse_oversized
from replay.tasks import custom
from stratune_core.records.errors import ConfigError, TaskDataError
from stratune_core.tasks.custom import CustomTask
from stratune_core.tasks.custom_scorers import BUILTIN, Scorer

Row = Mapping[str, Any] | tuple[Any, Any] | list[Any]
ScorerArg = str | Callable[[str, Any], float]
TASK_DIR = "task"
FIELDS = ("id", "input", "expected", "stratum", "split")


@frozen(kw_only=True)
class DataTask:
    """Rows as JSON-ready dicts, by split, and how to score and start them."""

    name: str
    train: tuple[dict[str, Any], ...] = field(converter=tuple)
    test: tuple[dict[str, Any], ...] = field(converter=tuple)
    scorer: Scorer
    initial_skill: str | None = None

    @classmethod
    def build(cls, rows: Iterable[Row], *, test: Iterable[Row] = (),
              scorer: ScorerArg = "exact", initial_skill: str | None = None,
              name: str = "python-task") -> DataTask:
        """Rows with a `split` field go to that split; others to training (`rows`) or to
        the test split (`test`)."""
        if not name or any(c in name for c in "/\\\0") or name in (".", ".."):
            raise ConfigError(f"task name {name!r}: give a plain name (no slashes)")
        train_rows = [_row(r, i, "task") for i, r in enumerate(_listed(rows, "task"))]
        test_rows = [_row(r, i, "test") for i, r in enumerate(_listed(test, "test"))]
        by_split: dict[str, list[dict[str, Any]]] = {"train": [], "test": []}
        for row, default in [*((r, "train") for r in train_rows), *((r, "test") for r in test_rows)]:
            split = row.pop("split", default)
            if split not in by_split:
                raise TaskDataError(f"task row {row['id']!r}: field 'split': unknown split "
                                    f"{split!r}; use train or test")
            by_split[split].append(row)
        if not by_split["train"]:
            raise TaskDataError("task: no training rows; give at least one (input, expected)")
        if initial_skill is not None and not initial_skill.strip():
            raise ConfigError("initial_skill: empty; give the skill text to start from, or None")
        if initial_skill is not None:
            refuse_oversized(initial_skill, "initial_skill")
        return cls(name=name, train=by_split["train"], test=by_split["test"],
                   scorer=_scorer(scorer), initial_skill=initial_skill)

    def digest(self) -> str:
        text = json.dumps([self.name, self.train, self.test, self.scorer.name,
                           self.initial_skill], sort_keys=True, ensure_ascii=False)
        return xxhash.xxh3_64_hexdigest(text.encode("utf-8"))

    def folder(self, out: str | Path) -> Path:
        """Where a run in `out` records the rows (absolute: replay works from anywhere)."""
        return Path(out).expanduser().resolve() / TASK_DIR / self.digest() / self.name

    def spec(self, out: str | Path, *, placement: str = "system",
             limit: int | None = None, skill: str | None = None) -> TaskSpec:
        """The run's task spec. A built-in scorer goes by its name, a function by
        module:name, which `stratune replay` imports (a function defined in a notebook or a
        script's `__main__` cannot be: replay such a run with `stratune.replay(OUT,
        scorer=...)`)."""
        return TaskSpec(spec=str(self.folder(out)), scorer=self.scorer.name,
                        placement=placement, limit=limit, skill=skill)

    def load(self, spec: TaskSpec) -> CustomTask:
        """The task, from the rows, read as the recorded files will be read."""
        folder = Path(spec.spec)
        return custom.load_rows(folder, {"train": _numbered(self.train),
                                         "test": _numbered(self.test)},
                                scorer=self.scorer, initial_skill=self.initial_skill,
                                placement=spec.placement, limit=spec.limit)

    def write(self, folder: Path) -> None:
        """The rows as a task directory; written once (the digest names the content)."""
        if (folder / "train.jsonl").is_file():
            return
        folder.mkdir(parents=True, exist_ok=True)
        for split, rows in (("train", self.train), ("test", self.test)):
            lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
            (folder / f"{split}.jsonl").write_text(lines, encoding="utf-8")
        if self.initial_skill is not None:
            (folder / "initial_skill.txt").write_text(self.initial_skill, encoding="utf-8")


def _listed(rows: Iterable[Row], where: str) -> list[Row]:
    if isinstance(rows, str | bytes | Mapping):
        raise ConfigError(f"{where}: give a list of rows (dicts or (input, expected) pairs), "
                          f"not a {type(rows).__name__}")
    return list(rows)


def _row(row: Row, index: int, where: str) -> dict[str, Any]:
    if isinstance(row, Mapping):
        data = dict(row)
        extra = sorted(set(map(str, data)) - set(FIELDS))
        if extra:
            raise TaskDataError(f"{where} row {index}: field {extra[0]!r}: unknown; a row "
                                f"holds {', '.join(FIELDS)} (images: use a JSONL task file)")
    elif isinstance(row, tuple | list) and len(row) == 2:
        data = {"input": row[0], "expected": row[1]}
    else:
        raise TaskDataError(f"{where} row {index}: expected a dict or an (input, expected) "
                            f"pair, got {type(row).__name__}")
    data.setdefault("id", index if where == "task" else f"test-{index}")
    try:  # the rows as the task file will hold them
        return json.loads(json.dumps(data, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise TaskDataError(f"{where} row {index}: not JSON data ({exc}); use strings, "
                            "numbers and lists") from None


def _numbered(rows: Iterable[dict[str, Any]]) -> list[tuple[int, Any]]:
    return list(enumerate(rows, start=1))


def _scorer(scorer: ScorerArg) -> Scorer:
    if isinstance(scorer, str):
        return custom.resolve_scorer(scorer)
    if not callable(scorer):
        raise ConfigError(f"scorer: expected a built-in name ({', '.join(BUILTIN)}) or a "
                          f"function (answer, expected) -> [0, 1], got {type(scorer).__name__}")
    module = getattr(scorer, "__module__", None) or "__main__"
    name = getattr(scorer, "__qualname__", None) or type(scorer).__name__
    return custom.function_scorer(scorer, f"{module}:{name}")
