"""The bundled demo task: reproducible from its generator, big enough, and format-sensitive."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from llm_cache.records import Response
from replay.tasks import bundled
from tests.support.generators import generator

DEMO_DIR = Path(__file__).resolve().parents[1] / "replay/data/demo"


def _generator() -> ModuleType:
    return generator("demo")


def test_committed_files_equal_generator_output() -> None:
    """train.jsonl and test.jsonl are exactly what generate.py writes."""
    for name, content in _generator().render().items():
        assert (DEMO_DIR / name).read_text(encoding="utf-8") == content, name


def test_generator_is_deterministic_and_seed_sensitive() -> None:
    gen = _generator()
    assert gen.render(1) == gen.render(1)
    assert gen.render(1) != gen.render(2)


def test_sizes_strata_and_short_documents() -> None:
    """At least 96 train / 48 test, five balanced strata, documents under 400 characters."""
    task = bundled.load()
    train, test = task.split("train"), task.split("test")
    assert len(train) >= 96 and len(test) >= 48
    counts = Counter(s.stratum for s in train)
    assert len(counts) == 5 and len(set(counts.values())) == 1
    for sample in train + test:
        document = sample.payload.input.split("\n\nQuestion:")[0]
        assert len(document) <= 400
        assert str(sample.payload.expected) in document
    assert not {s.payload.input for s in train} & {s.payload.input for s in test}


def test_vague_skill_and_exact_answers_score_apart() -> None:
    """Sentence answers fail, values copied verbatim pass (ANLS, solved at 0.9)."""
    task = bundled.load()
    assert task.info.initial_skill == "Answer the question about the document."
    assert task.info.success_threshold == 0.9
    for sample in task.split("test"):
        gold = str(sample.payload.expected)
        verbose = task.score(sample, (Response(text=f"The answer to the question is {gold}."),))
        exact = task.score(sample, (Response(text=gold),))
        assert verbose.value < 0.9 and verbose.summary
        assert exact.value == 1.0 and exact.summary == ""


@pytest.mark.parametrize(
    ("stratum", "reformatted"),
    [("invoice", lambda g: "EUR " + g), ("receipt", lambda g: "$" + g)],
)
def test_currency_prefix_is_penalised(stratum: str, reformatted: Callable[[str], str]) -> None:
    """Adding a currency sign or code to an amount keeps the answer below the solved bar."""
    task = bundled.load()
    sample = next(s for s in task.split("train")
                  if s.stratum == stratum and re.fullmatch(r"[\d,]+\.\d\d", str(s.payload.expected)))
    gold = str(sample.payload.expected)
    assert task.score(sample, (Response(text=reformatted(gold)),)).value < 0.9
