"""Reading task files with errors that name file, line and field; data-dir conventions.

The data dir (`--data DIR` or env STRATUNE_DATA) is the folder that holds the benchmark
folders (LiveMathematicianBench/, DocVQA/, Mind2Web/, SpreadsheetBench/), as in the authors'
`benchmark_sample/`. Strata and initial skills are looked up inside it and beside it
(`<dir>/strata/<ds>/...`, `<dir>/../strata/<ds>/...`), as the authors lay them out.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from replay.input_files import (
    number_too_long,
    read_regular,
    refuse_surrogates,
    too_many_digits,
)
from stratune_core.records.base import Sample
from stratune_core.records.errors import StraTuneError, TaskDataError

ENV_DATA = "STRATUNE_DATA"


def data_root(data_dir: str | Path | None) -> Path:
    raw = data_dir if data_dir is not None else os.environ.get(ENV_DATA)
    if not raw:
        raise TaskDataError(
            f"no data directory: pass --data DIR or set {ENV_DATA} to the folder holding "
            "the benchmark folders (e.g. LiveMathematicianBench/)"
        )
    root = Path(raw).expanduser()
    if not root.is_dir():
        raise TaskDataError(f"{root}: data directory not found; pass --data DIR or set {ENV_DATA} "
                            "to the folder holding the benchmark folders")
    return root


def require_file(path: Path, what: str) -> Path:
    if not path.is_file():
        if path.is_symlink() or path.exists():  # a FIFO, a device, a link loop or a folder
            kind = "a folder" if path.is_dir() else "not a regular file"
            raise TaskDataError(f"{path}: {what} is {kind}; give a file")
        raise TaskDataError(f"{path}: {what} not found; check --data / {ENV_DATA}")
    return path


def _bytes(path: Path, what: str) -> bytes:
    require_file(path, what)
    try:
        return read_regular(path, what)
    except StraTuneError as exc:
        raise TaskDataError(str(exc)) from None


def read_text(path: Path, what: str = "file") -> str:
    """The file as UTF-8 text; anything else is an error naming the line and the byte."""
    return _decode(_bytes(path, what), path, 1)


def _decode(data: bytes, path: Path, first_line: int) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + data.count(b"\n", 0, exc.start)
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise TaskDataError(
            f"{path}:{line}: not UTF-8 (byte 0x{data[exc.start]:02x} at column {column}); "
            "save the file as UTF-8"
        ) from None


def read_json(path: Path, what: str = "file") -> Any:
    text = read_text(path, what)
    try:
        value = json.loads(text)
    except RecursionError:
        raise TaskDataError(f"{path}: invalid JSON (nested too deeply)") from None
    except json.JSONDecodeError as exc:
        raise TaskDataError(
            f"{path}:{exc.lineno}: invalid JSON at column {exc.colno} ({exc.msg})"
        ) from None
    except ValueError as exc:
        if too_many_digits(exc):
            raise number_too_long(str(path), TaskDataError) from None
        raise
    refuse_surrogates(value, str(path), TaskDataError)
    return value


def read_jsonl(path: Path, what: str = "file") -> tuple[tuple[int, Any], ...]:
    """(line number, value) of every non-blank line; any malformed line fails the whole file."""
    rows = []
    for lineno, raw in enumerate(_bytes(path, what).splitlines(), start=1):
        line = _decode(raw, path, lineno)
        if not line.strip():
            continue
        try:
            row = json.loads(line, parse_constant=_not_json)
        except RecursionError:
            raise TaskDataError(f"{path}:{lineno}: invalid JSON (nested too deeply)") from None
        except ValueError as exc:  # JSONDecodeError, or NaN/Infinity refused
            if too_many_digits(exc):
                raise number_too_long(f"{path}:{lineno}", TaskDataError) from None
            where = f" at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
            msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise TaskDataError(f"{path}:{lineno}: invalid JSON{where} ({msg})") from None
        refuse_surrogates(row, f"{path}:{lineno}", TaskDataError)
        rows.append((lineno, row))
    return tuple(rows)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def field(obj: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """`obj[key]`, checked; `where` is "file:line" or "file: record k"."""
    if not isinstance(obj, dict):
        raise TaskDataError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    if key not in obj:
        raise TaskDataError(f"{where}: field {key!r}: missing")
    value = obj[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in kinds):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise TaskDataError(
            f"{where}: field {key!r}: expected {names}, got {type(value).__name__}"
        )
    return value


def id_list(path: Path) -> tuple[str, ...]:
    ids = read_json(path, "task id list")
    if not isinstance(ids, list) or not all(isinstance(i, str | int) for i in ids):
        raise TaskDataError(f"{path}: expected a JSON list of task ids")
    if not ids:
        raise TaskDataError(f"{path}: empty split (no task ids)")
    out = tuple(str(i) for i in ids)
    if len(set(out)) != len(out):
        dup = next(i for i in out if out.count(i) > 1)
        raise TaskDataError(f"{path}: duplicate task id {dup!r}")
    return out


def non_empty(samples: Sequence[Sample], path: Path) -> tuple[Sample, ...]:
    if not samples:
        raise TaskDataError(f"{path}: empty split (no samples)")
    return tuple(samples)


def _beside(root: Path, rel: str) -> Iterator[Path]:
    yield root / rel
    yield root.parent / rel


def strata(root: Path, ds: str, fields: tuple[str, ...]) -> dict[str, str]:
    """id -> stratum key ("v1|v2") from strata_meta_train.json; empty when the file is absent."""
    for path in _beside(root, f"strata/{ds}/strata_meta_train.json"):
        if path.is_file():
            meta = read_json(path, "strata file")
            if not isinstance(meta, dict):
                raise TaskDataError(f"{path}: expected an object of id -> strata fields")
            out = {}
            for key, row in meta.items():
                if not isinstance(row, dict) or any(f not in row for f in fields):
                    raise TaskDataError(f"{path}: id {key!r}: needs fields {', '.join(fields)}")
                out[str(key)] = "|".join(str(row[f]) for f in fields)
            return out
    return {}


def initial_skill(root: Path | None, ds: str) -> str:
    """The user's `initial_skills/<ds>.txt` (in or beside the data dir), else our own."""
    if root is not None:
        for path in _beside(root, f"initial_skills/{ds}.txt"):
            if path.is_file():
                skill = read_text(path, "initial skill").strip()
                if not skill:
                    raise TaskDataError(f"{path}:1: initial skill: empty (only white space); "
                                        "write the skill, or delete the file")
                return skill
    bundled = resources.files("replay.data").joinpath("initial_skills", f"{ds}.txt")
    return bundled.read_text(encoding="utf-8").strip()


def limited(samples: tuple[Sample, ...], limit: int | None) -> tuple[Sample, ...]:
    return samples if limit is None else samples[:limit]
