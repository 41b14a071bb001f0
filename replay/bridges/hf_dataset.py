"""`hf:PATH`: a Hugging Face dataset on disk as a custom task, read through `datasets`.

PATH is a dataset saved with `save_to_disk` (a `Dataset` or a `DatasetDict`), a parquet, CSV
or JSON(L) file, or a folder of such files (`train*.parquet` and `test*.parquet` are the two
splits, as the Hub lays them out). Columns: `input` and `expected` unless the spec says
otherwise (`?input=question&expected=answer`, `--input-col`, `--expected-col`), `id` if the
dataset has one. Splits: a DatasetDict's or the files' own `train` and `test`, else a split
column (`?split=COL`, or a column named `split`) holding train/test. The rows are read as a
JSONL task's lines are (same checks, same scorers); `initial_skill.txt` in or beside PATH is
the initial skill.

Nothing is downloaded: a name that is no file or folder here is refused, and the loader's
own cache goes to a temporary folder, removed once the rows are in memory.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from replay.bridges import specs
from replay.tasks import custom, files
from stratune_core.records.errors import TaskDataError
from stratune_core.tasks.custom import CustomTask

SPLITS = ("train", "test")
BUILDERS = {".parquet": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json"}
SAVED = ("dataset_dict.json", "dataset_info.json", "state.json")  # what save_to_disk writes


def _data_files(path: Path) -> tuple[str, dict[str, list[str]]]:
    """The loader and the files of each split of a file or a folder of files."""
    found = [path] if path.is_file() else sorted(p for p in path.iterdir()
                                                 if p.suffix in BUILDERS and p.is_file())
    kinds = {BUILDERS.get(p.suffix) for p in found}
    if not found or None in kinds or len(kinds) != 1:
        raise TaskDataError(f"{path}: not a saved dataset (save_to_disk) nor parquet, CSV or "
                            "JSON files of one kind")
    by_split = {s: [str(p) for p in found if p.name.startswith(s)] for s in SPLITS}
    if not all(by_split.values()):
        by_split = {"train": [str(p) for p in found]}
    return kinds.pop() or "", by_split


@contextlib.contextmanager
def _quiet(datasets: Any) -> Iterator[None]:
    """No progress bars and no log lines from `datasets` while it reads: a failure is the one
    line of the error `read` raises."""
    bars = datasets.are_progress_bars_disabled()
    logger = logging.getLogger("datasets")
    level = logger.level
    datasets.disable_progress_bars()
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)
        if not bars:
            datasets.enable_progress_bars()


def _load(datasets: Any, path: Path) -> Any:
    if path.is_dir() and any((path / name).is_file() for name in SAVED):
        return datasets.load_from_disk(str(path), keep_in_memory=True)
    builder, data_files = _data_files(path)
    # the readers of each format, not `load_dataset`: that one reports every load to the Hub
    # (a HEAD request per call, `increase_load_count`) unless told it is offline
    reader = {"parquet": datasets.Dataset.from_parquet, "csv": datasets.Dataset.from_csv,
              "json": datasets.Dataset.from_json}[builder]
    with tempfile.TemporaryDirectory(prefix="stratune-hf-") as cache:
        return datasets.DatasetDict({
            split: reader(files, split=split, cache_dir=cache, keep_in_memory=True)
            for split, files in data_files.items()})


def read(path: Path) -> dict[str, Any]:
    """Split name -> its rows (a `datasets.Dataset`), in memory."""
    import datasets

    try:
        with _quiet(datasets):
            loaded = _load(datasets, path)
    except (OSError, ValueError, datasets.exceptions.DatasetGenerationError) as exc:
        cause = exc.__cause__ or exc  # a generation error wraps the reader's own
        raise TaskDataError(f"{path}: not readable as a dataset ({type(cause).__name__}: "
                            f"{' '.join(str(cause).split())[:160]})") from None
    return dict(loaded) if isinstance(loaded, datasets.DatasetDict) else {"train": loaded}


def _split(where: str, splits: dict[str, Any], column: str | None) -> dict[str, list[dict]]:
    """Rows by split: the dataset's own train and test, else a split column's."""
    if "train" in splits and "test" in splits:
        return {s: list(splits[s]) for s in SPLITS}
    rows = [row for part in splits.values() for row in part]
    names = sorted(rows[0]) if rows else []
    column = column or ("split" if "split" in names else None)
    if column is None:
        raise TaskDataError(f"{where}: no test split (splits {', '.join(splits)}, no split "
                            "column); save train and test splits, or name a column of "
                            "train/test values: ?split=COL")
    if column not in names:
        raise TaskDataError(f"{where}: no column {column!r} for the split; columns: "
                            f"{', '.join(names)}")
    out: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for number, row in enumerate(rows, 1):
        if row[column] not in SPLITS:
            raise TaskDataError(f"{where}: row {number}: column {column!r} is "
                                f"{row[column]!r}; use train or test")
        out[row[column]].append(row)
    if not out["test"]:
        raise TaskDataError(f"{where}: no test split (no row has {column} = test)")
    return out


def _lines(where: str, rows: list[dict], split: str, spec: specs.BridgeSpec,
           ) -> list[tuple[int, dict[str, Any]]]:
    """The rows as task-file lines (`id`, `input`, `expected`), numbered from 1."""
    columns = {"input": spec.option("input"), "expected": spec.option("expected")}
    for role, name in columns.items():
        if rows and name not in rows[0]:
            raise TaskDataError(f"{where}: no column {name!r} for the {role}; columns: "
                                f"{', '.join(sorted(rows[0]))}; give --{role}-col COL")
    return [(n, {"id": row.get("id", f"{split}-{n}"),
                 "input": row[columns["input"]], "expected": row[columns["expected"]]})
            for n, row in enumerate(rows, 1)]


def load(spec: str, *, scorer: str | None = None, placement: str = "system",
         limit: int | None = None) -> CustomTask:
    parsed = specs.parse(spec)
    path = Path(parsed.path)
    if not path.exists():
        raise TaskDataError(f"task {spec}: {path} not found; StraTune reads datasets from disk "
                            "and downloads nothing: save it here first (docs/integrations.md)")
    chosen = custom.resolve_scorer(scorer or "exact")
    rows = _split(str(path), read(path), parsed.option("split"))
    parts = {s: custom.samples_of(_lines(str(path), rows[s], s, parsed), path, chosen, s)[s]
             for s in SPLITS}
    skill_file = (path if path.is_dir() else path.parent) / "initial_skill.txt"
    skill = files.read_text(skill_file, "initial skill") if skill_file.is_file() else None
    return custom.task_of(path, parts, chosen, skill, placement=placement, limit=limit,
                          name=path.stem if path.is_file() else path.name, max_tokens=1024)
