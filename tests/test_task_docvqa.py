"""DocVQA: image guard, scoring, requests with an image block, and the parquet loader."""

from __future__ import annotations

import base64
import io
import json
import sys
from pathlib import Path

import pytest
from PIL import Image

from llm_cache.records import ImageBlock, Response
from replay.tasks import docvqa as loader
from stratune_core.records.base import Sample
from stratune_core.records.errors import TaskDataError
from stratune_core.tasks.common import Splits
from stratune_core.tasks.docvqa import DocVQAItem, DocVQATask, score_answer


def _png(size: tuple[int, int], fmt: str = "PNG", noise: bool = False) -> bytes:
    img = Image.new("RGB", size, "white")
    if noise:
        img = Image.effect_noise(size, 100).convert("RGB")
    buf = io.BytesIO()
    img.save(buf, format=fmt)
    return buf.getvalue()


def test_small_png_passes_untouched() -> None:
    data = _png((40, 30))
    assert loader.guard_image(data) == data


def test_jpeg_becomes_png_of_same_size() -> None:
    out = loader.guard_image(_png((40, 30), fmt="JPEG"))
    assert out.startswith(b"\x89PNG")
    assert Image.open(io.BytesIO(out)).size == (40, 30)


def test_oversized_side_is_resized_to_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A side above the limit is brought down to it, keeping the aspect ratio."""
    monkeypatch.setattr(loader, "MAX_SIDE", 100)
    out = loader.guard_image(_png((400, 200)))
    assert Image.open(io.BytesIO(out)).size == (100, 50)


def test_heavy_png_is_shrunk_until_small_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    """A PNG over the byte limit is shrunk by 0.75 steps until it fits."""
    monkeypatch.setattr(loader, "MAX_BYTES", 20_000)
    data = _png((300, 300), noise=True)
    assert len(data) > 20_000
    out = loader.guard_image(data)
    assert len(out) <= 20_000
    assert Image.open(io.BytesIO(out)).size[0] < 300


def test_score_answer_rules() -> None:
    """Tagged exact answer solves; a verbose answer fails with a summary; aux is exact match."""
    good = score_answer("<answer>ITC Limited</answer>", ("itc limited",))
    assert (good.value, good.aux, good.summary) == (1.0, 1.0, "")
    verbose = score_answer("The company is ITC Limited.", ("ITC Limited",))
    assert verbose.value == 0.0 and "no <answer> tags" in verbose.summary
    near = score_answer("<answer>ITC Limite</answer>", ("ITC Limited",))
    assert near.value == pytest.approx(1 - 1 / 11) and near.aux == 0.0


def test_request_has_text_then_image() -> None:
    """The page travels as an ImageBlock after the question text."""
    item = DocVQAItem(question="Who?", answers=("x",), image_b64="QUJD")
    sample = Sample(id="1", payload=item)
    task = DocVQATask(splits=Splits(name="d", train=(sample,), test=(sample,)), initial_skill="s")
    (req,) = task.requests("SK", sample, "m")
    text, image = req.messages[0].content
    assert text.text == "Who?\n\nReturn the final answer inside <answer>...</answer>."
    assert isinstance(image, ImageBlock) and image.data == "QUJD"
    assert task.info.success_threshold == 0.9 and not task.info.binary


def _layout(root: Path, with_parquet: bool) -> Path:
    split_dirs = {}
    for split, qids in (("train", ["11", "12"]), ("test", ["21"])):
        folder = root / "DocVQA/dev" / split
        folder.mkdir(parents=True)
        index = [
            {"qid": q, "docId": "d", "ucsf_document_id": "u", "ucsf_document_page_no": "1",
             "question_types": ["layout"], "file": f"{split}.parquet", "row": k, "n_answers": 2,
             "source_file": "train-00001-of-00012.parquet", "source_row": k}
            for k, q in enumerate(reversed(qids))
        ]
        (folder / "task_index.json").write_text(json.dumps(index))
        (folder / "task_ids.json").write_text(json.dumps(qids))
        split_dirs[split] = (folder, list(reversed(qids)))
    if with_parquet:
        import pyarrow as pa
        import pyarrow.parquet as pq

        for split, (folder, rows) in split_dirs.items():
            table = pa.table({
                "questionId": [int(q) for q in rows],
                "question": [f"question {q}?" for q in rows],
                "question_types": [["layout"] for _ in rows],
                "answers": [[f"ans {q}", f"alt {q}"] for q in rows],
                "docId": [1 for _ in rows],
                "image": [{"bytes": _png((20, 10), fmt="JPEG"), "path": None} for _ in rows],
            })
            pq.write_table(table, folder / f"{split}.parquet")
    return root


def test_missing_shard_is_named(tmp_path: Path) -> None:
    """Without the parquet files the error names the shard and the question."""
    root = _layout(tmp_path, with_parquet=False)
    with pytest.raises(TaskDataError, match=r"parquet shard 'train.parquet' \(question 12\) not found"):
        loader.load(root)


def test_loader_reads_parquet(tmp_path: Path) -> None:
    """Rows are joined by (file, row), ids keep task_ids order, images arrive as PNG."""
    pytest.importorskip("pyarrow")
    root = _layout(tmp_path, with_parquet=True)
    task = loader.load(root)
    train = task.split("train")
    assert [s.id for s in train] == ["11", "12"]
    assert train[0].payload.question == "question 11?"
    assert train[0].payload.answers == ("ans 11", "alt 11")
    assert base64.b64decode(train[0].payload.image_b64).startswith(b"\x89PNG")
    assert task.score(train[0], (Response(text="<answer>alt 11</answer>"),)).value == 1.0


def test_without_pyarrow_the_error_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When pyarrow cannot be imported the message says which extra to install."""
    root = _layout(tmp_path, with_parquet=False)
    for split in ("train", "test"):
        (root / "DocVQA/dev" / split / f"{split}.parquet").write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(TaskDataError, match=r"stratune\[docvqa\]"):
        loader.load(root)
