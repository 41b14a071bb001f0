"""The bundled dates task: reproducible from its generator, and its convention decides scores."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import ModuleType

from llm_cache.records import Response
from replay.tasks import bundled
from replay.tasks.registry import BUILT_IN, load_task
from tests.support.generators import generator

DATES_DIR = Path(__file__).resolve().parents[1] / "replay/data/dates"


def _generator() -> ModuleType:
    return generator("dates")


def test_committed_files_equal_generator_output() -> None:
    for name, content in _generator().render().items():
        assert (DATES_DIR / name).read_text(encoding="utf-8") == content, name


def test_generator_is_deterministic_and_seed_sensitive() -> None:
    gen = _generator()
    assert gen.render(1) == gen.render(1)
    assert gen.render(1) != gen.render(2)


def test_named_task_with_balanced_interleaved_strata() -> None:
    """`--task dates` is bundled; any prefix (as --limit keeps) holds every stratum."""
    assert "dates" in BUILT_IN
    task = load_task("dates", limit=10)
    train = task.split("train")
    assert Counter(s.stratum for s in train) == {k: 2 for k in _generator().STRATA}
    full = bundled.load("dates")
    assert len(full.split("train")) == 120 and len(full.split("test")) == 60


def test_day_first_convention_decides_the_score() -> None:
    """The exact scorer: the ISO date passes; the month-first reading of an ambiguous
    all-number date, a sentence around the date, or the date as written fail."""
    task = bundled.load("dates")
    assert task.info.initial_skill.startswith("Write the date the text gives as YYYY-MM-DD")
    ambiguous = 0
    for sample in task.split("train"):
        gold = str(sample.payload.expected)
        year, month, day = gold.split("-")
        assert task.score(sample, (Response(text=gold),)).value == 1.0
        assert task.score(sample, (Response(text=f"The date is {gold}."),)).value == 0.0
        if sample.stratum == "slash" and int(day) <= 12:
            ambiguous += 1
            swapped = f"{year}-{day}-{month}"
            assert task.score(sample, (Response(text=swapped),)).value == 0.0
            assert f"{day}/{month}/{year}" in sample.payload.input
    assert ambiguous >= 12
