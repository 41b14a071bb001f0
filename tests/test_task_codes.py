"""The bundled codes task: reproducible from its generator, and its closed set of codes is what
only the feedback reveals."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import ModuleType

from llm_cache.records import Response
from replay.tasks import bundled
from replay.tasks.registry import BUILT_IN, TASK_HELP, load_task
from tests.support.generators import generator

CODES_DIR = Path(__file__).resolve().parents[1] / "replay/data/codes"


def _generator() -> ModuleType:
    return generator("codes")


def test_committed_files_equal_generator_output() -> None:
    for name, content in _generator().render().items():
        assert (CODES_DIR / name).read_text(encoding="utf-8") == content, name


def test_generator_is_deterministic_and_seed_sensitive() -> None:
    gen = _generator()
    assert gen.render(1) == gen.render(1)
    assert gen.render(1) != gen.render(2)


def test_named_task_with_balanced_interleaved_strata() -> None:
    """`--task codes` is bundled; any prefix (as --limit keeps) holds every department."""
    assert "codes" in BUILT_IN and "codes" in TASK_HELP
    task = load_task("codes", limit=12)
    assert Counter(s.stratum for s in task.split("train")) == {k: 2 for k in _generator().STRATA}
    full = bundled.load("codes")
    assert len(full.split("train")) == 120 and len(full.split("test")) == 60
    inputs = [s.payload.input for split in ("train", "test") for s in full.split(split)]
    assert len(set(inputs)) == len(inputs)  # no description repeats, across the splits too


def test_only_the_feedback_names_the_codes() -> None:
    """One arbitrary code per department; neither the initial skill nor any input names one, and
    no code begins with its department's initial."""
    gen = _generator()
    task = bundled.load("codes")
    codes = {stratum: entry[0] for stratum, entry in gen.CATEGORIES.items()}
    assert len(set(codes.values())) == len(codes) == 6
    for stratum, code in codes.items():
        assert code[0].lower() != stratum[0]
        assert code not in task.info.initial_skill
    for split in ("train", "test"):
        for sample in task.split(split):
            assert sample.payload.expected == codes[sample.stratum]
            assert not any(code in sample.payload.input for code in codes.values())
            assert f"Department: {sample.stratum}" in sample.payload.input


def test_the_code_alone_scores() -> None:
    """The exact scorer: the department's code passes; the department's name, another
    department's code or a sentence around the code fail."""
    task = bundled.load("codes")
    codes = {entry[0] for entry in _generator().CATEGORIES.values()}
    for sample in task.split("test"):
        gold = str(sample.payload.expected)
        other = sorted(codes - {gold})[0]
        assert task.score(sample, (Response(text=gold),)).value == 1.0
        assert task.score(sample, (Response(text=f"<answer>{gold}</answer>"),)).value == 1.0
        for wrong in (sample.stratum, sample.stratum.title(), other, f"The code is {gold}."):
            assert task.score(sample, (Response(text=wrong),)).value == 0.0
