"""Generate the bundled demo task: short synthetic business documents with one question each.

Deterministic (seeded `random.Random`, no clock, no network); the committed train.jsonl and
test.jsonl must equal this script's output (a test checks it). Run from the repo root:

    python replay/data/demo/generate.py            # rewrites the files beside this script
    python replay/data/demo/generate.py --out DIR  # writes elsewhere

Each document type is a stratum and writes its values in its own format (dates as 2024-03-07,
07.03.2024, 2024/03/07, 7 March 2024 or Mar 07, 2024; amounts with thousands separators and
no currency sign), so the gold answer is the value copied exactly as the document writes it.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from pathlib import Path

SEED = 20240307
N_TRAIN_PER_TYPE = 24
N_TEST_PER_TYPE = 12
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
FIRST = ("Ana", "Ben", "Chloe", "Dmitri", "Elif", "Farah", "Goran", "Hana", "Ivo", "Jonas",
         "Keiko", "Lena", "Mateo", "Nia", "Omar", "Priya", "Rui", "Sara", "Tomas", "Yara")
LAST = ("Berg", "Costa", "Dahl", "Evans", "Fischer", "Garcia", "Horvat", "Ito", "Jensen",
        "Kowalski", "Larsen", "Moreau", "Novak", "Okafor", "Petrov", "Quinn", "Rossi", "Sato")
COMPANIES = ("Northwind Traders", "Bluefield Supply", "Harbor & Pine Ltd", "Kestrel Foods",
             "Orbit Office Co", "Silverline Tools", "Maple Street Bakery", "Vela Logistics")
STORES = ("CORNER MARKET", "GREENLEAF GROCERS", "CITY HARDWARE", "BOOK NOOK", "DAILY PHARMACY")
ITEMS = ("Coffee beans 500g", "Olive oil 1L", "Rice 2kg", "Notebook A5", "AA batteries 4pk",
         "Tea 100 bags", "Dish soap", "Light bulb LED", "Pasta 1kg", "Printer paper")
CARRIERS = ("FastFreight", "NordPost", "BlueArrow Express", "TransVia")
CITIES = ("Lisbon", "Tallinn", "Porto", "Ghent", "Bergen", "Lyon", "Brno", "Turku")
HOTELS = ("Hotel Aurora", "Seaside Inn", "The Old Mill", "Parkview Suites")


def money(rng: random.Random, low: float, high: float) -> float:
    return round(rng.uniform(low, high), 2)


def fmt_money(value: float) -> str:
    return f"{value:,.2f}"


def date(rng: random.Random) -> tuple[int, int, int]:
    return 2023 + rng.randrange(3), 1 + rng.randrange(12), 1 + rng.randrange(28)


def person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def code(rng: random.Random, pattern: str) -> str:
    """'A' -> capital letter, '9' -> digit, anything else kept."""
    out = []
    for ch in pattern:
        if ch == "A":
            out.append(chr(65 + rng.randrange(26)))
        elif ch == "9":
            out.append(str(rng.randrange(10)))
        else:
            out.append(ch)
    return "".join(out)


Doc = tuple[str, tuple[tuple[str, str], ...]]  # text, (question, answer) pairs


def receipt(rng: random.Random) -> Doc:
    y, m, d = date(rng)
    lines, subtotal = [], 0.0
    for item in rng.sample(ITEMS, 3):
        qty, price = 1 + rng.randrange(3), money(rng, 1.5, 24.0)
        subtotal += qty * price
        lines.append(f"  {qty} x {item:<18} {qty * price:>7.2f}")
    tax = round(subtotal * 0.08, 2)
    total = round(subtotal + tax, 2)
    number, card = code(rng, "R-99999"), code(rng, "9999")
    text = (f"{rng.choice(STORES)}\nReceipt No: {number}\nDate: {y}-{m:02d}-{d:02d} "
            f"{rng.randrange(8, 21):02d}:{rng.randrange(60):02d}\n" + "\n".join(lines)
            + f"\nSubtotal {subtotal:.2f}\nTax 8% {tax:.2f}\nTOTAL {total:.2f}\n"
            f"Paid by card ****{card}")
    return text, (
        ("What is the total amount paid?", f"{total:.2f}"),
        ("What is the receipt number?", number),
        ("On what date was this purchase made?", f"{y}-{m:02d}-{d:02d}"),
        ("What are the last four digits of the card used?", card),
    )


def invoice(rng: random.Random) -> Doc:
    y, m, d = date(rng)
    due_m, due_y = (m % 12) + 1, y + (m == 12)
    number, amount = code(rng, f"INV-{y}-9999"), money(rng, 120.0, 9800.0)
    customer = rng.choice(COMPANIES)
    text = (f"INVOICE {number}\nIssued: {d:02d}.{m:02d}.{y}\nDue: {d:02d}.{due_m:02d}.{due_y}\n"
            f"Bill to: {customer}\nServices rendered per order {code(rng, 'PO-99999')}\n"
            f"Amount due (EUR): {fmt_money(amount)}\nPayment terms: 30 days net")
    return text, (
        ("How much is due on this invoice?", fmt_money(amount)),
        ("What is the invoice number?", number),
        ("When is payment due?", f"{d:02d}.{due_m:02d}.{due_y}"),
        ("Who is the invoice billed to?", customer),
    )


def shipping(rng: random.Random) -> Doc:
    y, m, d = date(rng)
    tracking, packages = code(rng, "AA-9999-AA"), 1 + rng.randrange(9)
    weight = f"{rng.randrange(2, 80)}.{rng.randrange(10)} kg"
    text = (f"SHIPPING NOTE\nTracking: {tracking}\nCarrier: {rng.choice(CARRIERS)}\n"
            f"Ship date: {y}/{m:02d}/{d:02d}\nPackages: {packages}\nGross weight: {weight}\n"
            f"Deliver to: {person(rng)}, {rng.choice(CITIES)}")
    return text, (
        ("What is the tracking code?", tracking),
        ("When was the shipment sent?", f"{y}/{m:02d}/{d:02d}"),
        ("What is the gross weight?", weight),
        ("How many packages are in the shipment?", str(packages)),
    )


def memo(rng: random.Random) -> Doc:
    y, m, d = date(rng)
    room, hour = code(rng, "A-999"), f"{rng.randrange(8, 18):02d}:{rng.choice(('00', '15', '30', '45'))}"
    sender = person(rng)
    text = (f"MEMO\nTo: All staff\nFrom: {sender}\nDate: {d} {MONTHS[m - 1]} {y}\n"
            f"Re: Quarterly review\nThe review meeting has moved to room {room}. "
            f"It starts at {hour} sharp. Please bring your notes.")
    return text, (
        ("In which room is the meeting?", room),
        ("At what time does the meeting start?", hour),
        ("Who sent this memo?", sender),
        ("What is the date of the memo?", f"{d} {MONTHS[m - 1]} {y}"),
    )


def booking(rng: random.Random) -> Doc:
    y, m, d = date(rng)
    ref, nights, rate = code(rng, "AA9-99999"), 1 + rng.randrange(6), money(rng, 60.0, 420.0)
    total = round(nights * rate, 2)
    checkin = f"{MONTHS[m - 1][:3]} {d:02d}, {y}"
    text = (f"BOOKING CONFIRMATION\n{rng.choice(HOTELS)}, {rng.choice(CITIES)}\nRef: {ref}\n"
            f"Guest: {person(rng)}\nCheck-in: {checkin}\nNights: {nights}\n"
            f"Rate per night: {fmt_money(rate)}\nTotal charged: {fmt_money(total)}")
    return text, (
        ("What is the booking reference?", ref),
        ("What is the check-in date?", checkin),
        ("What is the total charged?", fmt_money(total)),
        ("What is the rate per night?", fmt_money(rate)),
    )


TYPES: tuple[tuple[str, Callable[[random.Random], Doc]], ...] = (
    ("receipt", receipt), ("invoice", invoice), ("shipping_note", shipping),
    ("memo", memo), ("booking", booking),
)


def rows(seed: int = SEED) -> dict[str, list[dict[str, str]]]:
    rng = random.Random(seed)
    out: dict[str, list[dict[str, str]]] = {"train": [], "test": []}
    for split, per_type in (("train", N_TRAIN_PER_TYPE), ("test", N_TEST_PER_TYPE)):
        for k in range(per_type):
            for name, make in TYPES:
                text, questions = make(rng)
                question, answer = questions[k % len(questions)]
                out[split].append({
                    "id": f"{split}-{name}-{k:02d}",
                    "input": f"Document:\n{text}\n\nQuestion: {question}",
                    "expected": answer,
                    "stratum": name,
                })
    return out


def render(seed: int = SEED) -> dict[str, str]:
    """File name -> exact file content."""
    return {
        f"{split}.jsonl": "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in items)
        for split, items in rows(seed).items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, content in render().items():
        (args.out / name).write_text(content, encoding="utf-8")


if __name__ == "__main__":
    main()
