"""`inspect:FILE.py@TASK`: an Inspect task file's `@task`, loaded as a StraTune task.

Its samples become StraTune samples: the input (a string, or chat messages as the prompt), the
target, the id, and `metadata["split"]` (`train` or `test`). Samples without that metadata are
split by a seeded draw (`test_fraction`, `split_seed`: options of the spec, which the run's
manifest records). Everything a run needs is checked here, before anything is paid: the file
and the task exist, no sample or scorer needs a sandbox, no scorer grades with a model of its
own (its calls would bypass the run's cache), and the task's solvers and scorers run on the
first sample as far as its first model call.
"""

from __future__ import annotations

import random
from pathlib import Path

from inspect_ai import Task as InspectDefinition
from inspect_ai import list_tasks
from inspect_ai._eval.loader import load_tasks
from inspect_ai._util.error import PrerequisiteError
from inspect_ai._util.registry import registry_info, registry_params
from inspect_ai.dataset import Sample as InspectSample

from llm_cache.records import Response
from replay.bridges import specs
from replay.bridges.inspect_engine import DEFAULT_MAX_TOKENS
from replay.bridges.inspect_skill import SkillLayout
from replay.bridges.inspect_task import InspectItem, InspectTask
from replay.input_files import refuse_surrogates
from replay.tasks import files
from stratune_core.records.base import Sample
from stratune_core.records.errors import ConfigError, TaskDataError
from stratune_core.tasks.common import Splits

SPLITS = ("train", "test")
# scores only 0 or 1 (model-graded ones without partial_credit): a binary task
BINARY = frozenset(f"inspect_ai/{n}" for n in (
    "includes", "match", "exact", "choice", "pattern", "answer", "model_graded_qa",
    "model_graded_fact"))


def definition(spec: specs.BridgeSpec) -> InspectDefinition:
    """The Inspect `Task` the spec names, as `inspect eval FILE.py@TASK` would build it."""
    path = Path(spec.path)
    if not path.is_file():
        raise TaskDataError(f"task {spec.text()}: {path} not found; give an Inspect task file")
    names = [info.name for info in list_tasks([path.name], root_dir=path.parent)]
    if spec.task not in names:
        raise TaskDataError(f"{path}: no @task named {spec.task!r}; the file has "
                            f"{', '.join(names) or 'no @task'}")
    try:
        (found,) = load_tasks([f"{path}@{spec.task}"])
    except Exception as exc:  # the user's file: its own error, on one line
        raise TaskDataError(f"{path}@{spec.task}: loading the task raised "
                            f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}") from None
    return found


def _refuse_sandboxes(task: InspectDefinition, samples: list[InspectSample]) -> None:
    box = task.sandbox or next((s.sandbox for s in samples if s.sandbox is not None), None)
    if box is not None or any(s.files or s.setup for s in samples):
        kind = getattr(box, "type", box) or "sandbox"
        raise TaskDataError(f"Inspect task {task.name}: its samples run in a {kind} sandbox, "
                            "which StraTune cannot give its solvers and scorers; optimize a task "
                            "that needs none, and run this one with inspect eval")


def _refuse_own_graders(task: InspectDefinition) -> None:
    for scorer in task.scorer or []:
        model = registry_params(scorer).get("model")
        if model is not None:
            raise TaskDataError(f"Inspect task {task.name}: scorer {registry_info(scorer).name} "
                                f"grades with model {model!s:.60}, whose calls would not go "
                                "through the run's cache; drop model= to grade with the target")


def _split(task: InspectDefinition, samples: list[InspectSample],
           spec: specs.BridgeSpec) -> dict[str, list[Sample]]:
    converted, marked = [], []
    seen: set[str] = set()
    for index, sample in enumerate(samples):
        sid = str(sample.id) if sample.id is not None else str(index + 1)
        if sid in seen:
            raise TaskDataError(f"Inspect task {task.name}: sample id {sid!r} repeats")
        seen.add(sid)
        text = (sample.input if isinstance(sample.input, str)
                else [getattr(m, "text", "") for m in sample.input])
        refuse_surrogates({"id": sid, "input": text, "target": sample.target,
                           "choices": list(sample.choices or ())},
                          f"Inspect task {task.name}: sample {sid!r}", TaskDataError)
        split = (sample.metadata or {}).get("split")
        if split is not None and split not in SPLITS:
            raise TaskDataError(f"Inspect task {task.name}: sample {sid}: metadata split "
                                f"{split!r}; use train or test")
        marked.append(split)
        item = InspectItem(input=sample.input if isinstance(sample.input, str)
                           else tuple(sample.input), target=sample.target,
                           choices=tuple(sample.choices) if sample.choices else None,
                           metadata=dict(sample.metadata or {}), id=sid)
        converted.append(Sample(id=sid, payload=item))
    if any(m is None for m in marked) and any(m is not None for m in marked):
        raise TaskDataError(f"Inspect task {task.name}: some samples have metadata split and "
                            "some have none; give every sample one, or none for a seeded split")
    if all(m is None for m in marked):
        marked = _drawn(len(converted), spec)
    out: dict[str, list[Sample]] = {s: [] for s in SPLITS}
    for split, sample in zip(marked, converted, strict=True):
        out[split].append(sample)
    for split in SPLITS:
        if not out[split]:
            raise TaskDataError(f"Inspect task {task.name}: no {split} samples; mark some with "
                                f"metadata split {split!r}")
    return out


def split_options(spec: specs.BridgeSpec) -> tuple[float, int]:
    """The seeded split's `test_fraction` and `split_seed`, checked even when every sample
    carries its split (a wrong option is wrong whether or not it is used)."""
    try:
        fraction = float(spec.option("test_fraction") or "")
        seed = int(spec.option("split_seed") or "")
    except ValueError:
        raise ConfigError(f"task {spec.text()}: test_fraction is a number, split_seed a whole "
                          "number") from None
    if not 0.0 < fraction < 1.0 or seed < 0:
        raise ConfigError(f"task {spec.text()}: test_fraction lies in (0, 1), split_seed >= 0")
    return fraction, seed


def _drawn(n: int, spec: specs.BridgeSpec) -> list[str]:
    """A seeded split: `test_fraction` of the samples (at least one) to test."""
    fraction, seed = split_options(spec)
    order = list(range(n))
    random.Random(seed).shuffle(order)
    test = set(order[:max(1, round(n * fraction))])
    return ["test" if i in test else "train" for i in range(n)]


def _binary(task: InspectDefinition) -> bool:
    return all(registry_info(s).name in BINARY and not registry_params(s).get("partial_credit")
               for s in task.scorer or [])


def _dry_run(built: InspectTask) -> None:
    """The first training sample's execution as far as its first model call, then its scorers
    on an empty reply: what cannot run here (a sandbox, a model role that must be bound) fails
    now, not after the budget is paid. Other errors on an empty reply are that reply's score."""
    sample = built.split("train")[0]
    skill = built.info.initial_skill
    _, _, error = built.run(skill, sample, "dry-run", ())
    if error is None:
        _, _, error = built.run(skill, sample, "dry-run", (Response(text=""),))
        if not isinstance(error, ProcessLookupError | PrerequisiteError):
            return
    raise TaskDataError(f"Inspect task {built.info.name}: its solvers or scorers cannot run "
                        f"here ({type(error).__name__}: {' '.join(str(error).split())[:160]}); "
                        "a sandbox or a bound model role is not something StraTune gives")


def load(spec: str, *, scorer: str | None = None, placement: str = "system",
         limit: int | None = None) -> InspectTask:
    if placement != "system":
        raise ConfigError(f"placement: an Inspect task's skill is its system message; "
                          f"{placement!r} does not apply")
    parsed = specs.parse(spec)
    split_options(parsed)
    task = definition(parsed)
    samples = list(task.dataset)
    if not samples:
        raise TaskDataError(f"Inspect task {task.name}: its dataset is empty")
    _refuse_sandboxes(task, samples)
    _refuse_own_graders(task)
    by_split = _split(task, samples, parsed)
    built = InspectTask(
        task, name=f"inspect:{task.name}",
        splits=Splits(name=task.name, train=files.limited(tuple(by_split["train"]), limit),
                      test=files.limited(tuple(by_split["test"]), limit)),
        layout=SkillLayout.of(task), binary=_binary(task),
        max_tokens=task.config.max_tokens or DEFAULT_MAX_TOKENS)
    _dry_run(built)
    return built
