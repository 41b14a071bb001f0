"""Generate the bundled ledger task: a messy payment line, to be rewritten as one canonical line.

Deterministic (seeded `random.Random`, no clock, no network); the committed train.jsonl and
test.jsonl must equal this script's output (a test checks it). Run from the repo root:

    python replay/data/ledger/generate.py            # rewrites the files beside this script
    python replay/data/ledger/generate.py --out DIR  # writes elsewhere

Each layout of the payment line is a stratum. Every layout writes the payer, the date and the
amount its own way, in its own order; the answer is always `Given Surname | YYYY-MM-DD |
1234.50`: the payer's name with capital initials, the ISO date (a dotted date is day first),
the amount with a dot, two decimals, no currency and no thousands separator. The initial skill
asks for the payer, the date and the amount on one line, not for that format or those steps.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from pathlib import Path

SEED = 20251122
N_TRAIN_PER_STRATUM = 24
N_TEST_PER_STRATUM = 12
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
FIRST = ("Ana", "Ben", "Chloe", "Dmitri", "Elif", "Farah", "Goran", "Hana", "Ivo", "Jonas",
         "Keiko", "Lena", "Mateo", "Nia", "Omar", "Priya", "Rui", "Sara", "Tomas", "Yara")
LAST = ("Berg", "Costa", "Dahl", "Evans", "Fischer", "Garcia", "Horvat", "Ito", "Jensen",
        "Kowalski", "Larsen", "Moreau", "Novak", "Okafor", "Petrov", "Quinn", "Rossi", "Sato")


class Payment:
    """One payment: the payer's names, the date, the amount in cents."""

    def __init__(self, first: str, last: str, date: tuple[int, int, int], cents: int) -> None:
        self.first, self.last, self.date, self.cents = first, last, date, cents

    @property
    def canonical(self) -> str:
        year, month, day = self.date
        return f"{self.first} {self.last} | {year}-{month:02d}-{day:02d} | {self.amount('.')}"

    def amount(self, point: str, thousands: str = "") -> str:
        whole, cents = divmod(self.cents, 100)
        grouped = f"{whole:,}".replace(",", thousands)
        return f"{grouped}{point}{cents:02d}"

    def short_amount(self) -> str:
        """The amount without trailing zeros: 1234.5, 87, 12.05."""
        text = self.amount(".")
        return text.rstrip("0").rstrip(".") if "." in text else text


def sentence(p: Payment) -> str:
    year, month, day = p.date
    return (f"{p.first} {p.last} paid on {day} {MONTHS[month - 1]} {year} the sum of "
            f"EUR {p.amount('.', ',')}.")


def bank(p: Payment) -> str:
    year, month, day = p.date
    return f"{p.first} {p.last}  {day:02d}.{month:02d}.{year}  {p.amount(',')}"


def form(p: Payment) -> str:
    year, month, day = p.date
    return f"payer={p.first} {p.last}; date={year}/{month:02d}/{day:02d}; amt={p.short_amount()}"


def note(p: Payment) -> str:
    year, month, day = p.date
    return (f"{p.first.lower()} {p.last.lower()}, {MONTHS[month - 1][:3]} {day} {year}: "
            f"got {p.short_amount()}")


def receipt(p: Payment) -> str:
    year, month, day = p.date
    return f"{year}-{month:02d}-{day:02d}: {p.amount('.', ',')} received from {p.first} {p.last}"


STRATA: dict[str, Callable[[Payment], str]] = {
    "sentence": sentence, "bank": bank, "form": form, "note": note, "receipt": receipt,
}


def draw(rng: random.Random, stratum: str, index: int) -> Payment:
    year, month, day = 2021 + rng.randrange(6), 1 + rng.randrange(12), 1 + rng.randrange(28)
    # half the amounts are 1000 or more, where a thousands separator can appear
    whole = rng.randrange(1000, 9000) if index % 2 == 0 else rng.randrange(5, 1000)
    # every other amount ends in a zero cent digit or is whole, so a short form drops it
    cents = rng.choice((0, 10, 50, 90)) if index % 4 < 2 else rng.randrange(1, 100)
    return Payment(rng.choice(FIRST), rng.choice(LAST), (year, month, day), whole * 100 + cents)


def sample(rng: random.Random, split: str, stratum: str, index: int) -> dict[str, str]:
    payment = draw(rng, stratum, index)
    return {
        "id": f"{split}-{stratum}-{index:02d}",
        "input": f"Record: {STRATA[stratum](payment)}\n\nWrite this payment as one line.",
        "expected": payment.canonical,
        "stratum": stratum,
    }


def generate(seed: int = SEED) -> dict[str, list[dict[str, str]]]:
    rng = random.Random(seed)
    out: dict[str, list[dict[str, str]]] = {"train": [], "test": []}
    for split, count in (("train", N_TRAIN_PER_STRATUM), ("test", N_TEST_PER_STRATUM)):
        # interleaved strata, so any prefix of a split holds every layout
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
