"""The one price table (prices.json, with as_of dates) and cost estimates from usage."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

import attrs

from llm_cache.records import Usage

DEFAULT_CACHE_MIN_TOKENS = 1024


@attrs.frozen(kw_only=True)
class Price:
    """USD per million tokens for one model."""

    input: float
    cache_write: float
    cache_read: float
    output: float
    as_of: str = ""
    cache_min_tokens: int = DEFAULT_CACHE_MIN_TOKENS

    def cost(self, usage: Usage) -> float:
        return (
            usage.input_tokens * self.input
            + usage.cache_write_tokens * self.cache_write
            + usage.cache_read_tokens * self.cache_read
            + usage.output_tokens * self.output
        ) / 1_000_000


FREE = Price(input=0.0, cache_write=0.0, cache_read=0.0, output=0.0, as_of="local")


@attrs.frozen(kw_only=True)
class PriceTable:
    models: Mapping[str, Price]
    aliases: Mapping[str, str] = attrs.field(factory=dict)
    free_prefixes: tuple[str, ...] = ()

    def resolve(self, model: str) -> str:
        return self.aliases.get(model, model)

    def price(self, model: str) -> Price | None:
        """The price of a canonical model id; None when unknown (cost then reported as 0)."""
        if model.startswith(self.free_prefixes):
            return FREE
        return self.models.get(self.resolve(model))

    def cost(self, model: str, usage: Usage) -> float | None:
        price = self.price(model)
        return None if price is None else price.cost(usage)

    def cache_min_tokens(self, model: str) -> int:
        price = self.price(model)
        return DEFAULT_CACHE_MIN_TOKENS if price is None else price.cache_min_tokens

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PriceTable:
        models = {name: Price(**row) for name, row in data["models"].items()}
        return cls(
            models=models,
            aliases=dict(data.get("aliases", {})),
            free_prefixes=tuple(data.get("free_prefixes", ())),
        )


@cache
def default_prices() -> PriceTable:
    """The table shipped with the package (read once; the table is immutable)."""
    text = resources.files("llm_cache").joinpath("prices.json").read_text(encoding="utf-8")
    return PriceTable.from_json(json.loads(text))
