"""The Message Batches API through the SDK (`messages.batches`): requests to batch items, the
batch object to a status, result lines to item results (docs: build-with-claude/batch-processing
and api/messages/batches).

An item's `params` is the Messages API body itself: what `messages.create` takes as `extra_body`
(temperature, Bedrock's version) is merged into it, and the skill keeps its `cache_control`, so
prompt caching applies inside the batch as it does live.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llm_cache.backends.anthropic_params import build_params, to_response
from llm_cache.batch_records import BatchStatus, ItemKind, ItemResult
from llm_cache.records import Request

COUNT_FIELDS = ("processing", "succeeded", "errored", "canceled", "expired")
# Neither Bedrock client of the SDK reaches the Message Batches API: `AnthropicBedrock` raises
# "The Batch API is not supported in Bedrock yet" for /v1/messages/batches (lib/bedrock/
# _client.py), and Bedrock's Messages endpoint (Mantle) documents /anthropic/v1/messages and
# count_tokens only.
BEDROCK_REFUSAL = (
    "batch=on is not available on bedrock: specs: the anthropic SDK refuses the Message Batches "
    "API on Bedrock ('The Batch API is not supported in Bedrock yet') and Bedrock's Messages "
    "endpoint documents no batch route; use an anthropic: spec for batches, or leave batch off"
)


def batch_params(request: Request, *, send_model: str, cache_min_tokens: int,
                 extra_body: dict[str, Any] | None = None) -> dict[str, Any]:
    params = build_params(request, send_model=send_model, cache_min_tokens=cache_min_tokens,
                          extra_body=extra_body)
    params.update(params.pop("extra_body", {}))
    return params


async def create(client: Any, items: Sequence[tuple[str, dict[str, Any]]]) -> str:
    batch = await client.messages.batches.create(
        requests=[{"custom_id": custom_id, "params": params} for custom_id, params in items])
    return str(batch.id)


def to_status(batch: Any) -> BatchStatus:
    counts = batch.request_counts
    return BatchStatus(batch_id=str(batch.id), processing_status=str(batch.processing_status),
                       counts={name: int(getattr(counts, name, 0) or 0) for name in COUNT_FIELDS})


async def results(client: Any, batch_id: str, timeout: Any = None) -> list[ItemResult]:
    lines = await client.messages.batches.results(batch_id, **(
        {} if timeout is None else {"timeout": timeout}))
    return [to_item(line) async for line in lines]


def to_item(line: Any) -> ItemResult:
    result = line.result
    kind = ItemKind(result.type)
    if kind is ItemKind.SUCCEEDED:
        return ItemResult(custom_id=line.custom_id, kind=kind,
                          response=to_response(result.message))
    error = getattr(result, "error", None)
    body = error.to_dict() if error is not None and hasattr(error, "to_dict") else {}
    return ItemResult(custom_id=line.custom_id, kind=kind, error=body)
