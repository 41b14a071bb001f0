"""Procedurally generated tasks from the optional `reasoning-gym` package (extra `reasoning`).

`reasoning-gym:<dataset>[?n_train=96&n_test=48&seed=0]`: the package builds the questions
locally from the seed and grades answers with the dataset's own verifier, offline. Item i of a
dataset is drawn from seed + i, so train uses `seed` and test `seed + n_train` (disjoint draws);
test questions that still repeat a train question are dropped. The answer is the
text inside the last `<answer>` tags, else the last non-empty line. Solved = score 1.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from attrs import field, frozen

from llm_cache.records import Request, Response
from stratune_core.records.base import Sample, Score, TaskInfo
from stratune_core.records.errors import ConfigError, TaskDataError
from stratune_core.tasks import anls
from stratune_core.tasks.common import Placement, Splits, head, tail, target_request

INITIAL_SKILL = "Solve the problem. Put the final answer inside <answer>...</answer> tags."
DEFAULTS = {"n_train": 96, "n_test": 48, "seed": 0}


@frozen(kw_only=True)
class GymItem:
    question: str
    answer: str
    split: str
    index: int


@frozen(kw_only=True)
class ReasoningGymTask:
    dataset_name: str
    splits: Splits
    datasets: dict[str, Any] = field(eq=False, repr=False)  # split -> ProceduralDataset
    placement: Placement = field(default=Placement.SYSTEM, converter=Placement.parse)
    max_tokens: int = 2048

    @property
    def info(self) -> TaskInfo:
        return TaskInfo(name=f"reasoning-gym:{self.dataset_name}", initial_skill=INITIAL_SKILL,
                        success_threshold=1.0, binary=False, eps0=0.0025,
                        max_tokens=self.max_tokens, answer_markup=("<answer>", "</answer>"))

    def split(self, name: str) -> tuple[Sample, ...]:
        return self.splits.get(name)

    def requests(self, skill: str, sample: Sample, model: str) -> tuple[Request, ...]:
        item: GymItem = sample.payload
        return (target_request(skill=skill, user_text=item.question, model=model,
                               max_tokens=self.max_tokens, placement=self.placement),)

    def score(self, sample: Sample, responses: tuple[Response, ...]) -> Score:
        item: GymItem = sample.payload
        text = responses[0].text if responses else ""
        answer = anls.extract_answer(text)
        dataset = self.datasets[item.split]
        try:
            value = float(dataset.score_answer(answer=answer, entry=dataset[item.index]))
        except Exception as exc:  # a verifier that chokes on odd text is a failed answer
            return Score(value=0.0, output=tail(text), summary=f"verifier rejected the answer: {exc!s:.100}")
        value = min(1.0, max(0.0, value))
        summary = "" if value >= 1.0 - 1e-9 else (
            f'answered "{head(answer, 80)}", expected "{head(item.answer, 80)}" (score {value:.2f})')
        return Score(value=value, output=tail(text), summary=summary)

    def describe(self, sample: Sample) -> str:
        return head(sample.payload.question)

    def expected(self, sample: Sample) -> str:
        return head(sample.payload.answer, 300)


def parse_spec(spec: str) -> tuple[str, dict[str, int]]:
    body = spec.removeprefix("reasoning-gym:")
    name, _, query = body.partition("?")
    if not name:
        raise ConfigError(f"task: {spec!r} names no dataset; use reasoning-gym:<dataset>")
    params = dict(DEFAULTS)
    for key, values in parse_qs(query, keep_blank_values=True, strict_parsing=False).items():
        if key not in DEFAULTS:
            raise ConfigError(f"task: unknown option {key!r} in {spec!r}; use n_train, n_test, seed")
        try:
            params[key] = int(values[-1])
        except ValueError:
            raise ConfigError(f"task: option {key} in {spec!r} must be an integer") from None
    if params["n_train"] < 1 or params["n_test"] < 1:
        raise ConfigError(f"task: n_train and n_test must be >= 1 in {spec!r}")
    return name, params


def load(spec: str, *, placement: str = "system", limit: int | None = None) -> ReasoningGymTask:
    name, params = parse_spec(spec)
    try:
        import reasoning_gym
    except ImportError:
        raise ConfigError(
            "task: reasoning-gym tasks need the optional extra: pip install 'stratune[reasoning]'"
        ) from None
    try:
        train_ds = reasoning_gym.create_dataset(name, size=params["n_train"], seed=params["seed"])
        test_ds = reasoning_gym.create_dataset(name, size=params["n_test"], seed=params["seed"] + params["n_train"])
    except Exception as exc:  # the package raises plain errors for unknown names and bad options
        raise ConfigError(f"task: reasoning-gym cannot build {name!r}: {exc}") from None
    seen: set[str] = set()
    parts: dict[str, list[Sample]] = {"train": [], "test": []}
    for split, dataset in (("train", train_ds), ("test", test_ds)):
        for index in range(len(dataset)):
            entry = dataset[index]
            question = str(entry["question"])
            if split == "test" and question in seen:
                continue
            seen.add(question)
            item = GymItem(question=question, answer=str(entry["answer"]), split=split, index=index)
            parts[split].append(Sample(id=f"{split}-{index}", payload=item))
    if not parts["test"]:
        raise TaskDataError(f"{spec}: every test question also occurs in train; raise n_test or change seed")
    n = limit
    return ReasoningGymTask(
        dataset_name=name,
        splits=Splits(name=spec, train=tuple(parts["train"][:n]), test=tuple(parts["test"][:n])),
        datasets={"train": train_ds, "test": test_ds},
        placement=Placement.parse(placement),
    )
