"""Generate the bundled codes task: a short product description, to be given its category code.

Deterministic (seeded `random.Random`, no clock, no network); the committed train.jsonl and
test.jsonl must equal this script's output (a test checks it). Run from the repo root:

    python replay/data/codes/generate.py            # rewrites the files beside this script
    python replay/data/codes/generate.py --out DIR  # writes elsewhere

Each category is a stratum, and each sample names its product's department (kitchen, garden,
pets, office, toys, bicycle). Its code (`QX-14`, `HR-07`, ...) is arbitrary, and no code begins
with a department's initial: nothing in a sample or in the initial skill names the codes, so
only the feedback (the expected answers of failed samples) reveals which code stands for which
department.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

SEED = 20251121
N_TRAIN_PER_STRATUM = 20
N_TEST_PER_STRATUM = 10
# stratum -> (its code, what it covers, its products)
CATEGORIES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "kitchen": ("QX-14", "kitchen: cookware, utensils, food storage", (
        "garlic press", "saucepan", "cutting board", "whisk", "colander", "frying pan",
        "vegetable peeler", "salad spinner", "rolling pin", "soup ladle", "spice rack",
        "measuring jug")),
    "garden": ("HR-07", "garden: plants, lawn and outdoor growing", (
        "watering can", "pruning shears", "garden hose", "leaf rake", "flower pot",
        "seed tray", "wheelbarrow", "hand trowel", "hedge trimmer", "compost bin",
        "lawn sprinkler", "plant support stakes")),
    "pets": ("ML-22", "pets: food, care and housing for animals", (
        "dog leash", "cat scratching post", "bird cage", "aquarium filter", "dog bed",
        "cat litter tray", "pet food bowl", "hamster wheel", "flea comb", "dog collar",
        "cat carrier", "rabbit hutch")),
    "office": ("ZF-03", "office: stationery and desk supplies", (
        "stapler", "ring binder", "desk organiser", "fountain pen", "sticky notes",
        "paper shredder", "label printer", "hole punch", "whiteboard markers",
        "envelope pack", "letter tray", "printer paper ream")),
    "toys": ("WP-58", "toys: games and playthings for children", (
        "building blocks set", "jigsaw puzzle", "teddy bear", "toy train set", "kite",
        "doll house", "yo-yo", "board game", "water pistol", "spinning top", "marble run",
        "hand puppet")),
    "bicycle": ("DN-31", "bicycle: parts and accessories for bikes", (
        "bicycle chain", "bike inner tube", "bike brake pads", "bicycle saddle",
        "handlebar grips", "bike pedals", "bike pump", "rear derailleur", "spoke wrench",
        "bike mudguard", "bicycle bell", "bike chain lube")),
}
ATTRIBUTES = ("Compact", "Large", "Small", "Red", "Green", "Black", "Deluxe", "Budget",
              "Premium", "Classic")
DETAILS = ("with a two-year warranty", "in gift packaging", "made from recycled materials",
           "sold as a single unit", "for everyday use", "new season model",
           "ships within 48 hours", "limited edition")
STRATA = tuple(CATEGORIES)


def descriptions(rng: random.Random, stratum: str, count: int) -> list[str]:
    """`count` distinct descriptions of one category's products: each product in turn (in a
    random order), with an attribute and a detail drawn for it."""
    items = list(CATEGORIES[stratum][2])
    rng.shuffle(items)
    chosen: list[str] = []
    while len(chosen) < count:
        text = (f"{rng.choice(ATTRIBUTES)} {items[len(chosen) % len(items)]}, "
                f"{rng.choice(DETAILS)}")
        if text not in chosen:
            chosen.append(text)
    return chosen


def sample(split: str, stratum: str, index: int, text: str) -> dict[str, str]:
    return {
        "id": f"{split}-{stratum}-{index:02d}",
        "input": (f"Product: {text}\nDepartment: {stratum}\n\n"
                  "Which category code does this product belong to?"),
        "expected": CATEGORIES[stratum][0],
        "stratum": stratum,
    }


def generate(seed: int = SEED) -> dict[str, list[dict[str, str]]]:
    rng = random.Random(seed)
    counts = {"train": N_TRAIN_PER_STRATUM, "test": N_TEST_PER_STRATUM}
    texts = {stratum: descriptions(rng, stratum, sum(counts.values())) for stratum in STRATA}
    out: dict[str, list[dict[str, str]]] = {"train": [], "test": []}
    start = 0
    for split, count in counts.items():
        # interleaved strata, so any prefix of a split holds every category
        for index in range(count):
            for stratum in STRATA:
                out[split].append(sample(split, stratum, index, texts[stratum][start + index]))
        start += count
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
