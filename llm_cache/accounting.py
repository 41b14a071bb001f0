"""Usage and cost by call kind and model (the paper's Table 8).

Paid calls cost money now; those sent through the Message Batches API (`batch=on`) are a
subset of them, priced at the table's batch multiplier and shown apart. Cache hits (and duplicates answered by one in-flight call) keep the
usage they were recorded with and are shown as "would have cost": what this run would have paid
without the cache. Costs are estimates from `prices.json`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from llm_cache.prices import PriceTable, default_prices
from llm_cache.records import CallKind, Request, Response, Usage


@attrs.frozen(kw_only=True)
class AccountingRow:
    kind: CallKind | None  # None in an aggregate over kinds
    model: str  # "" in an aggregate over models
    paid_calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    usage: Usage = Usage()  # tokens of paid calls
    cached_usage: Usage = Usage()  # original tokens of the responses served from the cache
    cost_usd: float = 0.0
    would_have_cost_usd: float = 0.0
    priced: bool = True  # False if some model had no price (its cost counted as 0)
    # The Batch API part of the paid calls: included in paid_calls, usage and cost_usd above.
    batch_calls: int = 0
    batch_usage: Usage = Usage()
    batch_cost_usd: float = 0.0
    # Calls (paid or cached) whose max_tokens the backend lowered to fit the model's context,
    # and the smallest limit it sent (0: none lowered).
    clamped_calls: int = 0
    clamped_min: int = 0
    # wall time of the paid calls (a tool's run time: `compare`'s tool time)
    seconds: float = 0.0

    @property
    def calls(self) -> int:
        return self.paid_calls + self.cache_hits

    def __add__(self, other: AccountingRow) -> AccountingRow:
        return AccountingRow(
            kind=self.kind if self.kind == other.kind else None,
            model=self.model if self.model == other.model else "",
            paid_calls=self.paid_calls + other.paid_calls,
            cache_hits=self.cache_hits + other.cache_hits,
            retries=self.retries + other.retries,
            usage=self.usage + other.usage,
            cached_usage=self.cached_usage + other.cached_usage,
            cost_usd=self.cost_usd + other.cost_usd,
            would_have_cost_usd=self.would_have_cost_usd + other.would_have_cost_usd,
            priced=self.priced and other.priced,
            batch_calls=self.batch_calls + other.batch_calls,
            batch_usage=self.batch_usage + other.batch_usage,
            batch_cost_usd=self.batch_cost_usd + other.batch_cost_usd,
            clamped_calls=self.clamped_calls + other.clamped_calls,
            clamped_min=_smallest(self.clamped_min, other.clamped_min),
            seconds=self.seconds + other.seconds,
        )

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "kind": None if self.kind is None else self.kind.value,
            "model": self.model,
            "calls": self.calls,
            "paid_calls": self.paid_calls,
            "cache_hits": self.cache_hits,
            "retries": self.retries,
            "usage": attrs.asdict(self.usage),
            "cached_usage": attrs.asdict(self.cached_usage),
            "cost_usd": self.cost_usd,
            "would_have_cost_usd": self.would_have_cost_usd,
            "priced": self.priced,
            "batch_calls": self.batch_calls,
            "batch_usage": attrs.asdict(self.batch_usage),
            "batch_cost_usd": self.batch_cost_usd,
            "live_calls": self.paid_calls - self.batch_calls,
            "live_cost_usd": self.cost_usd - self.batch_cost_usd,
        }
        if self.clamped_calls:
            data.update(clamped_calls=self.clamped_calls, clamped_min=self.clamped_min)
        if self.kind is CallKind.TOOL_CALL or (self.kind is None and self.seconds):
            data["seconds"] = round(self.seconds, 3)
        return data


def _smallest(a: int, b: int) -> int:
    return min(a, b) if a and b else a or b


def _sum(rows: Iterable[AccountingRow], kind: CallKind | None, model: str) -> AccountingRow:
    total = AccountingRow(kind=kind, model=model)
    for row in rows:
        total = total + row
    return attrs.evolve(total, kind=kind, model=model)


@attrs.frozen(kw_only=True)
class Accounting:
    """An immutable snapshot; rows are per (kind, model), sorted."""

    rows: tuple[AccountingRow, ...] = ()

    def total(self) -> AccountingRow:
        return _sum(self.rows, None, "")

    def by_kind(self) -> dict[CallKind, AccountingRow]:
        return {k: _sum((r for r in self.rows if r.kind is k), k, "")
                for k in CallKind if any(r.kind is k for r in self.rows)}

    def by_model(self) -> dict[str, AccountingRow]:
        models = sorted({r.model for r in self.rows})
        return {m: _sum((r for r in self.rows if r.model == m), None, m) for m in models}

    def to_dict(self) -> dict[str, Any]:
        return {"rows": [r.to_dict() for r in self.rows], "total": self.total().to_dict()}


@attrs.define
class _Tally:
    paid_calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    usage: Usage = Usage()
    cached_usage: Usage = Usage()
    batch_calls: int = 0
    batch_usage: Usage = Usage()
    clamped_calls: int = 0
    clamped_min: int = 0
    seconds: float = 0.0

    def clamp(self, response: Response) -> None:
        if response.clamped_max_tokens is not None:
            self.clamped_calls += 1
            self.clamped_min = _smallest(self.clamped_min, response.clamped_max_tokens)


class Ledger:
    """The mutable collector behind `CachedLLM.accounting()`; safe across threads."""

    def __init__(self, prices: PriceTable | None = None) -> None:
        self._prices = prices or default_prices()
        self._lock = threading.Lock()
        self._tallies: dict[tuple[CallKind, str], _Tally] = {}

    def _tally(self, request: Request) -> _Tally:
        return self._tallies.setdefault((request.kind, request.model), _Tally())

    def paid(self, request: Request, response: Response, retries: int, *,
             batch: bool = False, seconds: float = 0.0) -> None:
        with self._lock:
            t = self._tally(request)
            t.paid_calls += 1
            if request.kind is CallKind.TOOL_CALL:
                t.seconds += seconds
            t.retries += retries
            t.usage = t.usage + response.usage
            if batch:
                t.batch_calls += 1
                t.batch_usage = t.batch_usage + response.usage
            t.clamp(response)

    def hit(self, request: Request, response: Response) -> None:
        with self._lock:
            t = self._tally(request)
            t.cache_hits += 1
            t.cached_usage = t.cached_usage + response.usage
            t.clamp(response)

    def hits(self, pairs: Iterable[tuple[Request, Response]]) -> None:
        for request, response in pairs:
            self.hit(request, response)

    def failed_retries(self, request: Request, retries: int) -> None:
        """Retries spent on a call that finally failed still count."""
        with self._lock:
            self._tally(request).retries += retries

    def snapshot(self) -> Accounting:
        with self._lock:
            items: Mapping[tuple[CallKind, str], _Tally] = dict(self._tallies)
            rows = []
            for (kind, model), t in sorted(items.items(), key=lambda kv: (kv[0][0].value, kv[0][1])):
                price = self._prices.price(model)
                live = Usage(**{f: getattr(t.usage, f) - getattr(t.batch_usage, f)
                                for f in attrs.fields_dict(Usage)})
                batch_cost = 0.0 if price is None else price.cost(
                    t.batch_usage, batch_multiplier=self._prices.batch_multiplier)
                rows.append(
                    AccountingRow(
                        kind=kind,
                        model=model,
                        paid_calls=t.paid_calls,
                        cache_hits=t.cache_hits,
                        retries=t.retries,
                        usage=t.usage,
                        cached_usage=t.cached_usage,
                        cost_usd=0.0 if price is None else price.cost(live) + batch_cost,
                        would_have_cost_usd=0.0 if price is None else price.cost(t.cached_usage),
                        priced=price is not None,
                        batch_calls=t.batch_calls,
                        batch_usage=t.batch_usage,
                        batch_cost_usd=batch_cost,
                        clamped_calls=t.clamped_calls,
                        clamped_min=t.clamped_min,
                        seconds=t.seconds,
                    )
                )
        return Accounting(rows=tuple(rows))
