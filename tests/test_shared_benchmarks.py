"""Loaders against the authors' sample data in ../shared/benchmarks (skipped when absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.tasks import docvqa, livemath, mind2web, spreadsheet
from replay.tasks.mind2web import records_from_array
from stratune_core.records.errors import TaskDataError

SHARED = Path(__file__).resolve().parents[2] / "shared/benchmarks"
SAMPLE = SHARED / "benchmark_sample"
pytestmark = pytest.mark.skipif(not SAMPLE.is_dir(), reason="../shared/benchmarks is not present")


def _ids(path: Path) -> list[str]:
    return [str(i) for i in json.loads(path.read_text())]


def test_livemath_sample_counts_ids_and_strata() -> None:
    task = livemath.load(SAMPLE)
    for split, n in (("train", 40), ("test", 20)):
        samples = task.split(split)
        assert len(samples) == n
        assert [s.id for s in samples] == _ids(SAMPLE / f"LiveMathematicianBench/{split}/task_ids.json")
        assert all(len(s.payload.choices) == 5 for s in samples)
    assert {s.stratum for s in task.split("train")} == {"202511", "202512"}
    assert task.info.initial_skill == (SHARED / "initial_skills/livemath.txt").read_text().strip()


def test_livemath_gold_labels_parse_back() -> None:
    """Every gold label written as an ANSWER line scores 1 (parser and data agree)."""
    from llm_cache.records import Response

    task = livemath.load(SAMPLE)
    for sample in task.split("train") + task.split("test"):
        reply = Response(text=f"Reasoning...\nANSWER: {sample.payload.correct_label}")
        assert task.score(sample, (reply,)).value == 1.0


def test_mind2web_first_test_records_parse() -> None:
    """The 6-record stand-in parses: 66 steps, 52 scoreable, ids are the first test ids."""
    items = records_from_array(SAMPLE / "Mind2Web/test/tasks.first6_verified_subset.json")
    assert [i.annotation_id for i in items] == _ids(SAMPLE / "Mind2Web/test/task_ids.json")[:6]
    steps = [s for i in items for s in i.steps]
    assert len(steps) == 66 and sum(s.scoreable for s in steps) == 52
    assert all(len(s.candidates) == 20 for s in steps if s.scoreable)


def test_mind2web_sample_lacks_train_file() -> None:
    with pytest.raises(TaskDataError, match=r"Mind2Web/train/tasks\.jsonl: .* not found"):
        mind2web.load(SAMPLE)


def test_docvqa_sample_names_missing_shard() -> None:
    with pytest.raises(TaskDataError, match=r"parquet shard 'docvqa-sample-train40\.parquet' \(question 9429\)"):
        docvqa.load(SAMPLE)


def test_spreadsheetbench_sample_names_missing_workbook() -> None:
    first = json.loads((SAMPLE / "SpreadsheetBench/train/tasks.json").read_text())[0]
    name = first["cases"][0]["input"]
    with pytest.raises(TaskDataError, match=rf"record 0 cases\[0\]: field 'input': workbook .*{name} not found"):
        spreadsheet.load(SAMPLE)


def test_strata_files_have_the_spec_fields() -> None:
    """Each strata file yields keys for the sample's training ids where it lists them."""
    from replay.tasks import files

    for ds, fields in (("livemath", ("month",)), ("docvqa", ("qlen_bucket",)),
                       ("mind2web", ("website", "steps_bucket")),
                       ("spreadsheetbench", ("instruction_type", "ilen_bucket"))):
        strata = files.strata(SAMPLE, ds, fields)
        assert strata and all(v.count("|") == len(fields) - 1 for v in strata.values())
