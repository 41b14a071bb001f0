"""The bundled ledger task: reproducible from its generator, and its procedure (payer, ISO date,
plain amount) decides scores."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from types import ModuleType

from llm_cache.records import Response
from replay.tasks import bundled
from replay.tasks.registry import BUILT_IN, TASK_HELP, load_task
from tests.support.generators import generator

LEDGER_DIR = Path(__file__).resolve().parents[1] / "replay/data/ledger"
CANONICAL = re.compile(r"[A-Z][a-z]+ [A-Z][a-z]+ \| \d{4}-\d{2}-\d{2} \| \d+\.\d{2}")


def _generator() -> ModuleType:
    return generator("ledger")


def test_committed_files_equal_generator_output() -> None:
    for name, content in _generator().render().items():
        assert (LEDGER_DIR / name).read_text(encoding="utf-8") == content, name


def test_generator_is_deterministic_and_seed_sensitive() -> None:
    gen = _generator()
    assert gen.render(1) == gen.render(1)
    assert gen.render(1) != gen.render(2)


def test_named_task_with_balanced_interleaved_strata() -> None:
    """`--task ledger` is bundled; any prefix (as --limit keeps) holds every layout."""
    assert "ledger" in BUILT_IN and "ledger" in TASK_HELP
    task = load_task("ledger", limit=10)
    assert Counter(s.stratum for s in task.split("train")) == {k: 2 for k in _generator().STRATA}
    full = bundled.load("ledger")
    assert len(full.split("train")) == 120 and len(full.split("test")) == 60


def test_every_record_needs_the_procedure() -> None:
    """Each answer is the canonical line, never the record as written; the initial skill states
    neither the format nor its steps."""
    task = bundled.load("ledger")
    assert "YYYY" not in task.info.initial_skill and "|" not in task.info.initial_skill
    separators = 0
    for split in ("train", "test"):
        for sample in task.split(split):
            gold, record = str(sample.payload.expected), str(sample.payload.input)
            assert CANONICAL.fullmatch(gold), gold
            assert gold not in record
            name, date, amount = gold.split(" | ")
            assert name.lower() in record.lower()
            year, month, day = date.split("-")
            if sample.stratum == "bank":  # day first, decimal comma
                assert f"{day}.{month}.{year}" in record
                assert amount.replace(".", ",") in record
            if re.search(r"\d,\d{3}", record):
                separators += 1
    assert separators >= 36


def test_only_the_canonical_line_scores() -> None:
    """The exact scorer: the canonical line passes; a currency, a thousands comma, another field
    order or the record's own date fail."""
    task = bundled.load("ledger")
    for sample in task.split("test"):
        gold = str(sample.payload.expected)
        name, date, amount = gold.split(" | ")
        assert task.score(sample, (Response(text=gold),)).value == 1.0
        year, month, day = date.split("-")
        wrong = (f"{name} | {date} | ${amount}", f"{date} | {name} | {amount}",
                 f"{name} | {day}.{month}.{year} | {amount}", f"{name}, {date}, {amount}")
        for text in wrong:
            assert task.score(sample, (Response(text=text),)).value == 0.0
        whole, cents = amount.split(".")
        if len(whole) > 3:
            grouped = f"{whole[:-3]},{whole[-3:]}.{cents}"
            assert task.score(sample, (Response(text=f"{name} | {date} | {grouped}"),)).value == 0.0
