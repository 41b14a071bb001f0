"""Generate the bundled dates task: one sentence with one date, to be written as YYYY-MM-DD.

Deterministic (seeded `random.Random`, no clock, no network); the committed train.jsonl and
test.jsonl must equal this script's output (a test checks it). Run from the repo root:

    python replay/data/dates/generate.py            # rewrites the files beside this script
    python replay/data/dates/generate.py --out DIR  # writes elsewhere

Each way of writing a date is a stratum. The data follow one convention the initial skill does
not state: a date written with numbers only is day first (03/04/2025 is 3 April 2025), and a
two-digit year is in the 2000s. A reader who assumes month first gets every all-number date
whose day is 12 or less wrong.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from pathlib import Path

SEED = 20251104
N_TRAIN_PER_STRATUM = 24
N_TEST_PER_STRATUM = 12
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
NAMES = ("Ana", "Ben", "Chloe", "Dmitri", "Elif", "Farah", "Goran", "Hana", "Ivo", "Jonas",
         "Keiko", "Lena", "Mateo", "Nia", "Omar", "Priya", "Rui", "Sara", "Tomas", "Yara")
SENTENCES = (
    "The contract with {name} was signed on {date}.",
    "Please deliver the parts no later than {date}.",
    "{name} moved into the new flat on {date}.",
    "Invoice 4471 was paid on {date}, two weeks late.",
    "The museum reopens to visitors on {date}.",
    "Our records show the last inspection took place on {date}.",
    "{name}'s flight to Oslo leaves on {date}.",
    "The warranty on this laptop expires on {date}.",
    "Registration for the course closes on {date}.",
    "{name} started working at the bakery on {date}.",
)
Date = tuple[int, int, int]


def slash(d: Date) -> str:
    return f"{d[2]:02d}/{d[1]:02d}/{d[0]}"


def dotted(d: Date) -> str:
    return f"{d[2]:02d}.{d[1]:02d}.{d[0]}"


def day_month(d: Date) -> str:
    return f"{d[2]} {MONTHS[d[1] - 1]} {d[0]}"


def month_day(d: Date) -> str:
    return f"{MONTHS[d[1] - 1]} {d[2]}, {d[0]}"


def short_year(d: Date) -> str:
    return f"{d[2]:02d}-{MONTHS[d[1] - 1][:3]}-{d[0] % 100:02d}"


STRATA: dict[str, Callable[[Date], str]] = {
    "slash": slash, "dotted": dotted, "day-month": day_month, "month-day": month_day,
    "short-year": short_year,
}


def draw_date(rng: random.Random, stratum: str, index: int) -> Date:
    year, month = 2021 + rng.randrange(6), 1 + rng.randrange(12)
    # all-number dates: two in three have a day of 12 or less, where day and month can swap
    if stratum in ("slash", "dotted") and index % 3 != 2:
        day = 1 + rng.randrange(12)
        while day == month:
            day = 1 + rng.randrange(12)
    else:
        day = 1 + rng.randrange(28)
    return year, month, day


def sample(rng: random.Random, split: str, stratum: str, index: int) -> dict[str, str]:
    when = draw_date(rng, stratum, index)
    sentence = rng.choice(SENTENCES).format(name=rng.choice(NAMES), date=STRATA[stratum](when))
    return {
        "id": f"{split}-{stratum}-{index:02d}",
        "input": f"Text: {sentence}\n\nWhat date does the text give?",
        "expected": f"{when[0]}-{when[1]:02d}-{when[2]:02d}",
        "stratum": stratum,
    }


def generate(seed: int = SEED) -> dict[str, list[dict[str, str]]]:
    rng = random.Random(seed)
    out: dict[str, list[dict[str, str]]] = {"train": [], "test": []}
    for split, count in (("train", N_TRAIN_PER_STRATUM), ("test", N_TEST_PER_STRATUM)):
        # interleaved strata, so any prefix of a split holds every way of writing a date
        for index in range(count):
            for stratum in STRATA:
                out[split].append(sample(rng, split, stratum, index))
    return out


def render(seed: int = SEED) -> dict[str, str]:
    """File name -> content, as written."""
    return {f"{split}.jsonl": "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
            for split, rows in generate(seed).items()}


def write(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in render().items():
        (folder / name).write_text(content, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    write(parser.parse_args().out)


if __name__ == "__main__":
    main()
