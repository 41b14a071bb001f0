"""Load DocVQA in the authors' layout: `<data>/DocVQA/dev/{train,test}/task_index.json` and
`task_ids.json`; questions, answers and page images live in the parquet shards the index names
(`file`, `row`), looked up in the split folder, then in `DocVQA/dev/` and `DocVQA/`.
Every shard is checked before any is read, so a missing one fails the load with its name.
Reading parquet needs pyarrow (the optional `docvqa` extra). Strata = qlen_bucket.

Image guard (the released code's limits): a page that is not PNG, is larger than 3.5 MB or has
a side over 7500 px is resized to fit 7500 px, then shrunk by 0.75 (LANCZOS) until its PNG is
<= 3.5 MB.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

from PIL import Image

from replay.tasks import files
from replay.tasks.benchmark import load_benchmark
from stratune_core.records.base import Sample
from stratune_core.records.errors import TaskDataError
from stratune_core.tasks import anls
from stratune_core.tasks.docvqa import DocVQAItem, DocVQATask

FOLDER = "DocVQA/dev"
MAX_BYTES = 3_500_000
MAX_SIDE = 7500
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def guard_image(data: bytes) -> bytes:
    """PNG bytes within the size rules; untouched when already compliant."""
    with Image.open(io.BytesIO(data)) as img:
        img.load()
        fits = max(img.size) <= MAX_SIDE
        if data.startswith(_PNG_MAGIC) and len(data) <= MAX_BYTES and fits:
            return data
        page = img.convert("RGB") if img.mode not in ("RGB", "L", "LA", "RGBA") else img.copy()
    if max(page.size) > MAX_SIDE:
        page.thumbnail((MAX_SIDE, MAX_SIDE), Image.Resampling.LANCZOS)
    while True:
        buf = io.BytesIO()
        page.save(buf, format="PNG", optimize=True)
        if buf.tell() <= MAX_BYTES or min(page.size) <= 16:
            return buf.getvalue()
        size = (max(1, int(page.width * 0.75)), max(1, int(page.height * 0.75)))
        page = page.resize(size, Image.Resampling.LANCZOS)


def _shard(folder: Path, root: Path, name: str, index_path: Path, qid: str) -> Path:
    for base in (folder, root / FOLDER, root / "DocVQA"):
        if (base / name).is_file():
            return base / name
    raise TaskDataError(
        f"{index_path}: parquet shard {name!r} (question {qid}) not found in {folder}; "
        "DocVQA page images come from the full dataset's parquet files: put them there"
    )


def _read_rows(path: Path, rows: set[int]) -> dict[int, dict[str, Any]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise TaskDataError(
            f"{path}: reading DocVQA parquet needs pyarrow; install the extra: "
            "pip install 'stratune[docvqa]'"
        ) from None
    table = pq.read_table(path)
    missing = {"questionId", "question", "answers", "image"} - set(table.column_names)
    if missing:
        raise TaskDataError(f"{path}: missing parquet column(s) {', '.join(sorted(missing))}")
    out = {}
    for row in rows:
        if not 0 <= row < table.num_rows:
            raise TaskDataError(f"{path}: row {row} out of range ({table.num_rows} rows)")
        out[row] = {name: table.column(name)[row].as_py() for name in table.column_names}
    return out


def _image_bytes(value: Any, where: str) -> bytes:
    data = value.get("bytes") if isinstance(value, dict) else value
    if not isinstance(data, bytes | bytearray) or not data:
        raise TaskDataError(f"{where}: field 'image': no image bytes")
    return bytes(data)


def load_split(root: Path, split: str, strata: dict[str, str]) -> tuple[Sample, ...]:
    folder = root / FOLDER / split
    ids = files.id_list(folder / "task_ids.json")
    index_path = folder / "task_index.json"
    index = files.read_json(index_path, "DocVQA task index")
    if not isinstance(index, list):
        raise TaskDataError(f"{index_path}: expected a JSON array of entries")
    entries: dict[str, tuple[Path, int, tuple[str, ...]]] = {}
    for k, entry in enumerate(index):
        where = f"{index_path}: entry {k}"
        qid = str(files.field(entry, "qid", (str, int), where))
        name = files.field(entry, "file", str, where)
        row = files.field(entry, "row", int, where)
        qtypes = tuple(str(t) for t in entry.get("question_types", ()))
        entries[qid] = (_shard(folder, root, name, index_path, qid), row, qtypes)
    missing = [q for q in ids if q not in entries]
    if missing:
        raise TaskDataError(f"{index_path}: question {missing[0]!r} of task_ids.json has no entry")
    wanted: dict[Path, set[int]] = {}
    for qid in ids:
        wanted.setdefault(entries[qid][0], set()).add(entries[qid][1])
    rows = {path: _read_rows(path, r) for path, r in wanted.items()}
    samples = []
    for qid in ids:
        path, row, qtypes = entries[qid]
        record = rows[path][row]
        where = f"{path}: row {row}"
        if str(record.get("questionId")) != qid:
            raise TaskDataError(f"{where}: field 'questionId' is {record.get('questionId')!r}, index says {qid}")
        answers = anls.gold_answers(record.get("answers"))
        if not answers:
            raise TaskDataError(f"{where}: field 'answers': no gold answer")
        png = guard_image(_image_bytes(record.get("image"), where))
        item = DocVQAItem(
            question=str(record["question"]),
            answers=answers,
            image_b64=base64.b64encode(png).decode("ascii"),
            question_types=qtypes or tuple(record.get("question_types") or ()),
        )
        samples.append(Sample(id=qid, stratum=strata.get(qid, "all"), payload=item))
    return files.non_empty(samples, folder)


def load(
    data_dir: str | Path | None, *, placement: str = "system", limit: int | None = None
) -> DocVQATask:
    return load_benchmark(DocVQATask, data_dir, strata=("qlen_bucket",), load_split=load_split,
                          placement=placement, limit=limit)
