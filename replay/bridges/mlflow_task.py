"""An `optimize_prompts` call's templates and records as a StraTune task (`mlflow:FOLDER`).

One execution is one (candidate, record) pair: its request holds the candidate's templates
(the `{name: template}` MLflow's `eval_fn` takes) as the system text and the record as the
user text, so the cache keys it by content. The reply is what `eval_fn` made of it (the
predict_fn's outputs, the aggregated score, each scorer's score and rationale), written by
the backend of `replay/bridges/mlflow_optimizer.py`; this module reads it back and needs no
MLflow, so a recorded run replays from its directory alone.

The run records the templates and the records in `OUT/task/<digest>/<name>/` (prompts.json,
records.jsonl) and its task spec names that folder, as a Python task's rows are recorded
(`replay/api/data_task.py`): other templates or records are another task, refused on the same
`out`. All records are training samples; the scores reported to MLflow are the initial and
the final skill's means over them, scored after the run.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import xxhash
from attrs import field, frozen

from llm_cache.records import CallKind, Message, Request, Response, Role
from replay.bridges import specs
from replay.bridges.mlflow_prompts import skill_of, templates_of
from replay.tasks import files
from stratune_core.records.base import Sample, Score, TaskInfo
from stratune_core.records.errors import ConfigError, TaskDataError
from stratune_core.records.parts import Placeholders
from stratune_core.tasks.common import Splits, head

TASK_DIR = "task"
SHOWN = 400  # characters of inputs, outputs and expectations shown to the optimizer


def _plain(value: Any) -> Any:
    """A numpy scalar or array (a DataFrame's cells) as JSON data; anything else JSON cannot
    hold (a timestamp column) as its text."""
    for convert in ("item", "tolist"):
        if callable(getattr(value, convert, None)):
            return getattr(value, convert)()
    return str(value)


def record_text(record: Mapping[str, Any], index: int) -> str:
    """A record as the canonical JSON its executions are keyed by."""
    if not isinstance(record, Mapping) or "inputs" not in record:
        raise TaskDataError(f"train_data[{index}]: a record holds `inputs` (a dict) and "
                            "`outputs` or `expectations`")
    return json.dumps(dict(record), sort_keys=True, ensure_ascii=False, default=_plain)


def expectations(record: Mapping[str, Any]) -> Any:
    """What a record expects, as MLflow's eval_fn hands it to the scorers."""
    found = record.get("expectations")
    if found is None or isinstance(found, float) and math.isnan(found):
        return {"expected_response": record.get("outputs")}
    return found


def _fields(value: Any) -> str:
    if isinstance(value, Mapping):
        return head("\n".join(f"{k}: {v}" for k, v in value.items()), SHOWN)
    return head(str(value), SHOWN)


@frozen(kw_only=True)
class Reply:
    """What eval_fn made of one (candidate, record) pair."""

    score: float
    outputs: str
    individual_scores: Mapping[str, float] = field(factory=dict)
    rationales: Mapping[str, str] = field(factory=dict)

    def text(self) -> str:
        return json.dumps({"score": self.score, "outputs": self.outputs,
                           "individual_scores": dict(self.individual_scores),
                           "rationales": dict(self.rationales)}, ensure_ascii=False)

    @classmethod
    def read(cls, text: str) -> Reply:
        data = json.loads(text)
        return cls(score=float(data["score"]), outputs=data["outputs"],
                   individual_scores=data["individual_scores"], rationales=data["rationales"])


@frozen(kw_only=True)
class PromptData:
    """The templates and the records of one optimize_prompts call, as the run records them."""

    name: str
    prompts: tuple[tuple[str, str], ...] = field(converter=lambda v: tuple(dict(v).items()))
    records: tuple[str, ...] = field(converter=tuple)  # each record's canonical JSON
    threshold: float = 1.0

    @classmethod
    def build(cls, name: str, prompts: Mapping[str, str], records: Sequence[Mapping[str, Any]],
              threshold: float = 1.0) -> PromptData:
        if not name or any(c in name for c in "/\\\0") or name in (".", ".."):
            raise ConfigError(f"name {name!r}: give a plain name (no slashes)")
        if not records:
            raise TaskDataError("optimize_prompts gave no train_data; StraTune learns from "
                                "executions: pass train_data=[{'inputs': ..., 'outputs': ...}]")
        data = cls(name=name, prompts=prompts,
                   records=[record_text(r, i) for i, r in enumerate(records)],
                   threshold=threshold)
        data.task()  # every template and part checked before anything is written or paid
        return data

    def digest(self) -> str:
        text = json.dumps([self.name, self.prompts, self.records, self.threshold])
        return xxhash.xxh3_64_hexdigest(text.encode("utf-8"))

    def folder(self, out: str | Path) -> Path:
        return Path(out).expanduser().resolve() / TASK_DIR / self.digest() / self.name

    def spec(self, out: str | Path) -> str:
        return specs.MLFLOW + str(self.folder(out))

    def write(self, folder: Path) -> None:
        if (folder / "records.jsonl").is_file():  # the digest names the content
            return
        folder.mkdir(parents=True, exist_ok=True)
        meta = {"name": self.name, "prompts": dict(self.prompts), "threshold": self.threshold}
        (folder / "prompts.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1),
                                             encoding="utf-8")
        (folder / "records.jsonl").write_text("".join(r + "\n" for r in self.records),
                                              encoding="utf-8")

    @classmethod
    def read(cls, folder: Path) -> PromptData:
        meta = files.read_json(files.require_file(folder / "prompts.json", "MLflow prompts"),
                               "MLflow prompts")
        lines = files.read_text(files.require_file(folder / "records.jsonl", "MLflow records"),
                                "MLflow records").splitlines()
        try:
            return cls(name=meta["name"], prompts=meta["prompts"], records=lines,
                       threshold=float(meta["threshold"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise TaskDataError(f"{folder / 'prompts.json'}: not what stratune.mlflow "
                                f"writes ({exc}); the run directory was edited") from None

    def task(self, limit: int | None = None) -> PromptTask:
        document, kept = skill_of(dict(self.prompts))
        samples = tuple(Sample(id=f"r{i:04d}", payload=json.loads(text))
                        for i, text in enumerate(self.records, 1))
        return PromptTask(data=self, initial_skill=document, placeholders=kept,
                          splits=Splits(name=self.name, train=files.limited(samples, limit),
                                        test=()))


@frozen(kw_only=True)
class PromptTask:
    """`Task`: each record run under a candidate's templates by MLflow's eval_fn."""

    data: PromptData
    initial_skill: str
    placeholders: Placeholders
    splits: Splits

    @property
    def info(self) -> TaskInfo:
        # max_tokens only labels the request: the predict_fn makes its own model calls
        return TaskInfo(name=f"mlflow:{self.data.name}", initial_skill=self.initial_skill,
                        success_threshold=self.data.threshold, binary=self.data.threshold == 1.0,
                        max_tokens=1, placeholders=self.placeholders)

    def split(self, name: str) -> tuple[Sample, ...]:
        return self.splits.get(name)

    def templates(self, skill: str) -> dict[str, str]:
        return templates_of(skill, dict(self.data.prompts))

    def requests(self, skill: str, sample: Sample, model: str) -> tuple[Request, ...]:
        record = json.dumps(sample.payload, sort_keys=True, ensure_ascii=False)
        system = json.dumps(self.templates(skill), ensure_ascii=False)
        return (Request(role=Role.TARGET, model=model, system=system,
                        messages=(Message.user(record),), max_tokens=1,
                        kind=CallKind.TARGET_EXECUTION),)

    def score(self, sample: Sample, responses: tuple[Response, ...]) -> Score:
        reply = Reply.read(responses[0].text)
        if reply.score >= self.data.threshold - 1e-9:
            return Score(value=reply.score, output=head(reply.outputs, SHOWN))
        scores = ", ".join(f"{k} {v:g}" for k, v in reply.individual_scores.items())
        why = " ".join(f"{k}: {v}" for k, v in reply.rationales.items() if v)
        summary = f"score {reply.score:.2f}" + (f" ({scores})" if scores else "") + \
            (f"; {why}" if why else "")
        return Score(value=reply.score, output=head(reply.outputs, SHOWN),
                     summary=head(summary, SHOWN))

    def describe(self, sample: Sample) -> str:
        return _fields(sample.payload["inputs"])

    def expected(self, sample: Sample) -> str:
        return _fields(expectations(sample.payload))


def load(spec: str, *, scorer: str | None = None, placement: str = "system",
         limit: int | None = None) -> PromptTask:
    """The task a run recorded (`mlflow:FOLDER`), for `stratune replay` and `view`."""
    if placement != "system":
        raise ConfigError(f"placement: an MLflow run's skill is its prompt templates; "
                          f"{placement!r} does not apply")
    folder = Path(specs.parse(spec).path)
    if not folder.is_dir():
        raise TaskDataError(f"task {spec}: {folder} not found; an MLflow run's task is recorded "
                            "in its run directory by stratune.mlflow")
    return PromptData.read(folder).task(limit)
