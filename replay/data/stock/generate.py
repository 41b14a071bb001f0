"""Generate the bundled stock task: questions about a shop's products whose answers only its
inventory tools know (`tools.py`: `stock` and `price`).

Deterministic (seeded `random.Random`, no clock, no network); the committed train.jsonl,
test.jsonl and inventory.json must equal this script's output (a test checks it). Run from the
repo root:

    python replay/data/stock/generate.py            # rewrites the files beside this script
    python replay/data/stock/generate.py --out DIR  # writes elsewhere

A product code is written `SKU-` and four digits, and the tools take it exactly so: a model
that passes the digits alone (`4471`) is told there is no such product. Strata: the question
asks for the stock or the price, directly or in a customer's words.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

SEED = 20261207
N_PRODUCTS = 180  # one per sample: no test product is seen in training
N_TRAIN_PER_STRATUM = 30
N_TEST_PER_STRATUM = 15
NAMES = ("desk lamp", "kettle", "bike pump", "notebook", "backpack", "water bottle", "stapler",
         "toaster", "umbrella", "headphones", "thermos", "doormat", "cutting board", "tripod")
STRATA = {
    "stock": ("How many units of {sku} are in stock?",
              "What is the stock level of {sku}?"),
    "stock-customer": ("A customer wants to know how many of the {name} {sku} we still have. "
                       "How many units are there?",
                       "Is the {name} ({sku}) still available? Give the number of units left."),
    "price": ("What is the unit price of {sku}?",
              "How much does one {sku} cost?"),
    "price-customer": ("A customer asks what the {name} {sku} costs. What is its price?",
                       "Before ordering the {name} ({sku}), a buyer asks for its price. What is "
                       "it?"),
}


def inventory(rng: random.Random) -> dict[str, dict[str, object]]:
    codes = rng.sample(range(1000, 10000), N_PRODUCTS)
    return {f"SKU-{code}": {"name": rng.choice(NAMES), "units": rng.randrange(0, 400),
                            "price": f"{rng.randrange(199, 19999) / 100:.2f}"}
            for code in sorted(codes)}


def generate(seed: int = SEED) -> tuple[dict[str, list[dict[str, str]]], dict[str, object]]:
    rng = random.Random(seed)
    products = inventory(rng)
    codes = list(products)
    rng.shuffle(codes)
    out: dict[str, list[dict[str, str]]] = {"train": [], "test": []}
    used = iter(codes)
    for split, count in (("train", N_TRAIN_PER_STRATUM), ("test", N_TEST_PER_STRATUM)):
        for index in range(count):  # interleaved: any prefix holds every stratum
            for stratum, phrasings in STRATA.items():
                sku = next(used)
                item = products[sku]
                question = phrasings[index % len(phrasings)].format(sku=sku, name=item["name"])
                answer = str(item["units"]) if stratum.startswith("stock") else item["price"]
                out[split].append({"id": f"{split}-{stratum}-{index:02d}", "input": question,
                                   "expected": answer, "stratum": stratum})
    return out, products


def render(seed: int = SEED) -> dict[str, str]:
    """File name -> content, as written."""
    splits, products = generate(seed)
    files = {f"{split}.jsonl": "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
             for split, rows in splits.items()}
    files["inventory.json"] = json.dumps(products, indent=1, sort_keys=True) + "\n"
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    folder = parser.parse_args().out
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in render().items():
        (folder / name).write_text(content, encoding="utf-8")


if __name__ == "__main__":
    main()
