"""The one price table (prices.json, with as_of dates and sources) and cost estimates from usage.

Per model: base input, 5-minute and 1-hour cache writes (1.25x and 2x input), cache reads, and
output, in USD per million tokens. Table-wide: the Batch API price (50% of every token
category) and the premium of regional over global endpoints on Bedrock and Google Cloud (+10%,
Sonnet 4.5 / Haiku 4.5 and later; a row sets `regional_multiplier: 1.0` for older models). The
multipliers stack with the cache prices, as the pricing page says.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

import attrs

from llm_cache.records import Usage

DEFAULT_CACHE_MIN_TOKENS = 1024
CACHE_TTLS = ("5m", "1h")


@attrs.frozen(kw_only=True)
class Price:
    """USD per million tokens for one model."""

    input: float
    cache_write: float  # 5-minute TTL, the only one StraTune's backends write
    cache_read: float
    output: float
    cache_write_1h: float = attrs.field(
        default=attrs.Factory(lambda self: 2 * self.input, takes_self=True))
    regional_multiplier: float = 1.1
    as_of: str = ""
    cache_min_tokens: int = DEFAULT_CACHE_MIN_TOKENS

    def cost(self, usage: Usage, *, cache_ttl: str = "5m", batch_multiplier: float = 1.0,
             regional: bool = False) -> float:
        if cache_ttl not in CACHE_TTLS:
            raise ValueError(f"cache_ttl={cache_ttl!r}: use one of {CACHE_TTLS}")
        write = self.cache_write if cache_ttl == "5m" else self.cache_write_1h
        base = (
            usage.input_tokens * self.input
            + usage.cache_write_tokens * write
            + usage.cache_read_tokens * self.cache_read
            + usage.output_tokens * self.output
        ) / 1_000_000
        return base * batch_multiplier * (self.regional_multiplier if regional else 1.0)


FREE = Price(input=0.0, cache_write=0.0, cache_read=0.0, output=0.0, cache_write_1h=0.0,
             regional_multiplier=1.0, as_of="local")


@attrs.frozen(kw_only=True)
class CostEstimate:
    """One usage priced three ways: standard, through the Batch API, on a regional endpoint."""

    standard: float
    batch: float
    regional: float
    local: bool = False

    def describe(self) -> str:
        if self.local:
            return "$0 (local model)"
        return (f"~${self.standard:.2f} (Batch API ~${self.batch:.2f}; regional Bedrock/Google "
                f"Cloud endpoint ~${self.regional:.2f})")


@attrs.frozen(kw_only=True)
class PriceTable:
    models: Mapping[str, Price]
    aliases: Mapping[str, str] = attrs.field(factory=dict)
    free_prefixes: tuple[str, ...] = ()
    batch_multiplier: float = 0.5

    def resolve(self, model: str) -> str:
        return self.aliases.get(model, model)

    def price(self, model: str) -> Price | None:
        """The price of a canonical model id; None when unknown (cost then reported as 0)."""
        if model.startswith(self.free_prefixes):
            return FREE
        found = self.models.get(self.resolve(model))
        if found is None and "@" in model:  # a harness's episode is priced as its model
            return self.models.get(self.resolve(model.partition("@")[0]))
        return found

    def cost(self, model: str, usage: Usage) -> float | None:
        price = self.price(model)
        return None if price is None else price.cost(usage)

    def estimate(self, model: str, usage: Usage) -> CostEstimate | None:
        price = self.price(model)
        if price is None:
            return None
        return CostEstimate(standard=price.cost(usage),
                            batch=price.cost(usage, batch_multiplier=self.batch_multiplier),
                            regional=price.cost(usage, regional=True), local=price is FREE)

    def describe_rates(self, model: str) -> str | None:
        """`$1 in / $5 out per MTok; cache write $1.25 (5 min) or $2 (1 h), read $0.10`."""
        p = self.price(model)
        if p is None or p is FREE:
            return None
        return (f"{_usd(p.input)} in / {_usd(p.output)} out per MTok; cache write "
                f"{_usd(p.cache_write)} (5 min) or {_usd(p.cache_write_1h)} (1 h), read "
                f"{_usd(p.cache_read)}; Batch API x{self.batch_multiplier:g}; regional endpoint "
                f"x{p.regional_multiplier:g}")

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
            batch_multiplier=float(data.get("batch_multiplier", 0.5)),
        )


def _usd(value: float) -> str:
    return f"${value:g}" if value == int(value) else f"${value:.2f}" if round(value, 2) == value \
        else f"${value:g}"


@cache
def default_prices() -> PriceTable:
    """The table shipped with the package (read once; the table is immutable)."""
    text = resources.files("llm_cache").joinpath("prices.json").read_text(encoding="utf-8")
    return PriceTable.from_json(json.loads(text))
