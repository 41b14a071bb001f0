"""`--task hf:PATH`: a Hugging Face dataset the test writes (with `save_to_disk`, or as parquet,
CSV and JSON files through `datasets`) as a StraTune task, its columns mapped with `--input-col`
and `--expected-col`, its splits from the dataset or a split column, trained against the
project's fake server with every connection off this machine refused (nothing is downloaded)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

datasets = pytest.importorskip("datasets")

import stratune  # noqa: E402
from llm_cache.records import Role  # noqa: E402
from llm_cache.testing.fake_server import FakeAnthropicServer  # noqa: E402
from replay.bridges.specs import normalized  # noqa: E402
from replay.tasks.registry import load_task  # noqa: E402
from tests.support.cli import main  # noqa: E402
from tests.support.offline import offline  # noqa: E402, F401 (a fixture)
from tests.support.toy import (  # noqa: E402
    INITIAL_SKILL,
    WORDS,
    ToyOptimizer,
    body_request,
    expected_answer,
    toy_target,
)

pytestmark = pytest.mark.usefixtures("offline")  # nothing leaves this machine

TARGET, OPTIMIZER = "claude-haiku-4-5", "claude-sonnet-4-6"
MODELS = ["--target", f"anthropic:{TARGET}", "--optimizer", f"anthropic:{OPTIMIZER}"]
# not [U]: the exact scorer ignores letter case, so the initial skill already solves those
MARKERS = ("R", "D", "P")


def question(word: str, marker: str) -> str:
    """A row's input: the toy target reads the word and its marker, the toy optimizer the
    markers the failures it is shown name."""
    return f"Word: {word} [{marker}]\nThe marker [{marker}] says how to answer."


def rows(n: int = 32) -> list[dict[str, Any]]:
    """Toy words as dataset rows: every fourth one a test row (column `part`)."""
    out = []
    for i, word in enumerate(WORDS[:n]):
        marker = MARKERS[i % len(MARKERS)]
        out.append({"id": f"q{i:02d}", "question": question(word, marker),
                    "answer": expected_answer(word, marker),
                    "part": "test" if i % 4 == 3 else "train"})
    return out


TRAIN_IDS = [r["id"] for r in rows() if r["part"] == "train"]
TEST_IDS = [r["id"] for r in rows() if r["part"] == "test"]


def _split(name: str) -> Any:
    return datasets.Dataset.from_list([r for r in rows() if r["part"] == name])


def write(kind: str, where: Path) -> str:
    """The dataset `rows()` written as `kind`; the spec (with its options) that reads it."""
    columns = "input=question&expected=answer"
    whole = datasets.Dataset.from_list(rows())
    if kind == "saved-dict":  # save_to_disk of a DatasetDict: its own splits
        datasets.DatasetDict({"train": _split("train"), "test": _split("test")}) \
            .save_to_disk(str(where / "saved"))
        return f"hf:{where / 'saved'}?{columns}"
    if kind == "saved-column":  # save_to_disk of one Dataset with a split column
        whole.save_to_disk(str(where / "saved"))
        return f"hf:{where / 'saved'}?{columns}&split=part"
    if kind == "hub-parquet":  # a Hub dataset's files, as `hf download` leaves them
        (where / "data").mkdir()
        _split("train").to_parquet(str(where / "data" / "train-00000-of-00001.parquet"))
        _split("test").to_parquet(str(where / "data" / "test-00000-of-00001.parquet"))
        return f"hf:{where / 'data'}?{columns}"
    # one file; its split column named `split`, found without the option
    renamed = whole.rename_column("part", "split")
    path = where / f"rows.{kind}"
    {"parquet": renamed.to_parquet, "csv": renamed.to_csv, "jsonl": renamed.to_json}[kind](
        str(path))
    return f"hf:{path}?{columns}"


@pytest.fixture(autouse=True)
def quiet() -> Iterator[None]:
    """No progress bars from the datasets the tests write (they would be on stderr)."""
    datasets.disable_progress_bars()
    yield
    datasets.enable_progress_bars()


def _respond(body: dict[str, Any]) -> str:
    if body["model"] == TARGET:
        return toy_target(body_request(body, Role.TARGET)).text
    return ToyOptimizer(style="good")(body_request(body, Role.OPTIMIZER)).text


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer(responder=_respond) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
        yield fake


def test_a_saved_dataset_trains_from_the_command_line_with_mapped_columns(server, tmp_path):
    datasets.DatasetDict({"train": _split("train"), "test": _split("test")}) \
        .save_to_disk(str(tmp_path / "words"))
    (tmp_path / "words" / "initial_skill.txt").write_text(INITIAL_SKILL, encoding="utf-8")
    out = tmp_path / "run"
    assert main(["train", "--task", f"hf:{tmp_path / 'words'}", "--input-col", "question",
                 "--expected-col", "answer", "--limit", "18", *MODELS, "--out", str(out),
                 "--test-eval"]) == 0
    run = stratune.load_run(out)
    assert run.manifest.task.spec == f"hf:{tmp_path / 'words'}?input=question&expected=answer"
    assert run.manifest.task.limit == 18
    assert run.initial_skill == INITIAL_SKILL
    initial = run.view.started.initial_skill_id
    assert run.test_scores[run.final_id] > run.test_scores[initial]
    evaluation = json.loads((out / "evaluation.json").read_text())
    assert evaluation["split"] == "test" and evaluation["n"] == len(TEST_IDS)
    assert main(["replay", str(out)]) == 0


@pytest.mark.parametrize("kind", ["saved-dict", "saved-column", "hub-parquet", "parquet",
                                  "csv", "jsonl"])
def test_saved_datasets_and_files_give_the_same_samples(tmp_path, kind):
    spec = normalized(write(kind, tmp_path))
    task = load_task(spec)
    assert [s.id for s in task.split("train")] == TRAIN_IDS
    assert [s.id for s in task.split("test")] == TEST_IDS
    first = task.split("train")[0]
    assert (task.describe(first), task.expected(first)) == (question("apple", "R"), "elppa")
    limited = load_task(spec, limit=5)
    assert [s.id for s in limited.split("train")] == TRAIN_IDS[:5]
    assert [s.id for s in limited.split("test")] == TEST_IDS[:5]


def test_the_python_api_trains_on_a_parquet_file_and_a_rerun_pays_nothing(server, tmp_path):
    spec = write("parquet", tmp_path)
    options = dict(target=f"anthropic:{TARGET}", optimizer=f"anthropic:{OPTIMIZER}",
                   out=tmp_path / "run", limit=12, budget="4x", progress=False)
    result = stratune.optimize(spec, **options)
    assert result.run.manifest.task.spec == normalized(spec)
    assert result.spent <= 4 * 12
    paid = len(server.requests)
    again = stratune.optimize(spec, **options)
    assert len(server.requests) == paid
    assert again.run.manifest.event_digest == result.run.manifest.event_digest
    # the columns a Python call gives as the spec's options, as --input-col does
    with pytest.raises(stratune.TaskDataError, match="no column 'input' for the input"):
        stratune.optimize(spec.partition("?")[0], **{**options, "out": tmp_path / "other"})
    assert not (tmp_path / "other").exists()


def _no_split(where: Path) -> str:
    datasets.Dataset.from_list(rows()).remove_columns("part").save_to_disk(str(where / "flat"))
    return f"hf:{where / 'flat'}"


def _train_only(where: Path) -> str:
    datasets.DatasetDict({"train": _split("train")}).save_to_disk(str(where / "train-only"))
    return f"hf:{where / 'train-only'}"


def _no_test_rows(where: Path) -> str:
    _split("train").save_to_disk(str(where / "no-test"))
    return f"hf:{where / 'no-test'}?split=part"


def _not_parquet(where: Path) -> str:
    (where / "rows.parquet").write_text("id,question,answer\n", encoding="utf-8")
    return f"hf:{where / 'rows.parquet'}"


def _bad_split_value(where: Path) -> str:
    datasets.Dataset.from_list([{**r, "part": "dev"} for r in rows(4)]) \
        .save_to_disk(str(where / "dev"))
    return f"hf:{where / 'dev'}?split=part"


@pytest.mark.parametrize(("make", "flags", "says"), [
    (lambda w: write("saved-dict", w).partition("?")[0], ["--input-col", "prompt"],
     "no column 'prompt' for the input; columns: answer, id, part, question"),
    (lambda w: write("saved-dict", w).partition("?")[0],
     ["--input-col", "question", "--expected-col", "gold"], "no column 'gold' for the expected"),
    (lambda w: write("saved-dict", w), ["--input-col", "text"],
     "already names column 'question'"),
    (_no_split, ["--input-col", "question", "--expected-col", "answer"],
     "no test split (splits train, no split column)"),
    (_train_only, ["--input-col", "question", "--expected-col", "answer"], "no test split"),
    (_no_test_rows, ["--input-col", "question", "--expected-col", "answer"],
     "no test split (no row has part = test)"),
    (_bad_split_value, [], "column 'part' is 'dev'; use train or test"),
    (lambda w: write("saved-column", w).replace("split=part", "split=fold"), [],
     "no column 'fold' for the split"),
    (lambda w: f"hf:{w / 'squad'}", [], "downloads nothing"),
    (_not_parquet, [], "not readable as a dataset (ArrowInvalid: Parquet magic bytes"),
    (lambda w: "demo", ["--input-col", "question"], "only hf: tasks take column names"),
    (lambda w: write("csv", w) + "&shuffle=1", [], "unknown option 'shuffle'"),
])
def test_bad_datasets_exit_2_before_anything_is_paid(server, tmp_path, capsys, make, flags,
                                                     says):
    spec = make(tmp_path)
    out = tmp_path / "run"
    assert main(["train", "--task", spec, *flags, *MODELS, "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert says in error and len(error.strip().splitlines()) == 1, error
    assert not server.requests and not out.exists()


def test_without_datasets_an_hf_task_is_one_line_naming_the_extra(server, tmp_path, capsys,
                                                                  monkeypatch):
    spec = write("csv", tmp_path)
    monkeypatch.setitem(sys.modules, "datasets", None)  # as if not installed
    assert main(["train", "--task", spec, *MODELS, "--out", str(tmp_path / "run")]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: task: hf: tasks need datasets, which is not installed: "
                            "pip install 'stratune[hf]'")
    assert not server.requests and not (tmp_path / "run").exists()
