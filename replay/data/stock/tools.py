"""The stock task's tools: the shop's inventory, read from `inventory.json` beside this file.
Both are pure (the same code gives the same answer), so a replay recomputes their calls."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from replay.tools.declared import tool


@cache
def _inventory() -> dict[str, dict[str, object]]:
    return json.loads((Path(__file__).with_name("inventory.json")).read_text(encoding="utf-8"))


def _product(sku: str) -> dict[str, object]:
    found = _inventory().get(sku)
    if found is None:
        raise KeyError(f"no product {sku!r}; product codes are written SKU-NNNN")
    return found


@tool(pure=True)
def stock(sku: str) -> int:
    """The number of units of a product in stock.

    Args:
        sku: the product code
    """
    return int(_product(sku)["units"])  # type: ignore[call-overload]


@tool(pure=True)
def price(sku: str) -> str:
    """The unit price of a product, in euros.

    Args:
        sku: the product code
    """
    return str(_product(sku)["price"])


TOOLS = [stock, price]
