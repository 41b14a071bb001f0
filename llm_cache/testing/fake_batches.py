"""The fake server's Message Batches API: create, retrieve, results (JSONL) and cancel.

Shapes follow the API reference (api/messages/batches): a `message_batch` object with
`processing_status` (`in_progress`, `canceling`, `ended`), `request_counts` (all `processing`
until the batch ends), an absolute `results_url` once it has ended; result lines
`{"custom_id", "result": {"type": "succeeded" | "errored" | "canceled" | "expired", ...}}` in an
order other than the requests' (the reverse). `custom_id` must match `^[a-zA-Z0-9_-]{1,64}$` and
be unique in its batch, or the create call is a 400, as on the API; a request the Messages API
would refuse becomes an `errored` item (`invalid_request_error`), since params are checked
while the batch is processed.

Each batch ends `delay` seconds after it was created. Each item's outcome comes from an explicit
schedule (`outcomes`, one entry per item in arrival order across batches), else is drawn with
`error_rate` / `expire_rate` from a seeded generator. State lives in the server object, so a
client that is killed and restarted finds its batch where it left it.
"""

from __future__ import annotations

import enum
import json
import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs

from llm_cache.testing.fake_replies import Reply, api_error, reject

PREFIX = "/v1/messages/batches"
CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_REQUESTS = 100_000
COUNTS = ("processing", "succeeded", "errored", "canceled", "expired")


class ItemOutcome(enum.Enum):
    SUCCEEDED = "succeeded"
    OVERLOADED = "overloaded_error"  # errored, retryable (529 on a live call)
    API_ERROR = "api_error"  # errored, retryable (500)
    RATE_LIMITED = "rate_limit_error"  # errored, retryable (429)
    INVALID = "invalid_request_error"  # errored, not retryable (400)
    EXPIRED = "expired"
    CANCELED = "canceled"

    @property
    def result_type(self) -> str:
        if self in (ItemOutcome.SUCCEEDED, ItemOutcome.EXPIRED, ItemOutcome.CANCELED):
            return self.value
        return "errored"


@attrs.define
class FakeBatch:
    id: str
    created: float  # time.monotonic() at creation
    created_at: datetime
    requests: list[Mapping[str, Any]]
    outcomes: list[ItemOutcome]
    canceled: bool = False
    lines: list[dict[str, Any]] | None = None  # the results, made once when the batch ends


def _stamp(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")


class FakeBatches:
    """Batch state and replies; `answer(params, model, message_id)` makes one message."""

    def __init__(self, answer: Callable[[Mapping[str, Any], str, str], dict[str, Any]],
                 url: Callable[[], str], *, delay: float = 0.0, error_rate: float = 0.0,
                 error_kinds: Sequence[ItemOutcome] = (ItemOutcome.OVERLOADED,
                                                       ItemOutcome.API_ERROR),
                 expire_rate: float = 0.0, outcomes: Sequence[ItemOutcome | None] = (),
                 seed: int = 0) -> None:
        self._answer = answer
        self._url = url
        self.delay = delay
        self.error_rate = error_rate
        self.error_kinds = tuple(error_kinds)
        self.expire_rate = expire_rate
        self.outcomes = tuple(outcomes)
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.batches: dict[str, FakeBatch] = {}
        self._items = 0

    # ---- routes ----

    def post(self, path: str, body: Mapping[str, Any]) -> Reply:
        if path == PREFIX:
            return self.create(body)
        batch_id, _, action = path[len(PREFIX) + 1:].partition("/")
        if action == "cancel":
            return self.cancel(batch_id)
        return api_error(404, "not_found_error", f"no route {path}")

    def get(self, path: str) -> Reply:
        batch_id, _, action = path[len(PREFIX) + 1:].partition("/")
        if not action:
            return self.retrieve(batch_id)
        if action == "results":
            return self.results(batch_id)
        return api_error(404, "not_found_error", f"no route {path}")

    # ---- endpoints ----

    def create(self, body: Mapping[str, Any]) -> Reply:
        requests = body.get("requests")
        if not isinstance(requests, list) or not 1 <= len(requests) <= MAX_REQUESTS:
            return api_error(400, "invalid_request_error",
                             f"requests: give 1 to {MAX_REQUESTS:,} requests")
        seen: set[str] = set()
        for i, item in enumerate(requests):
            custom_id = item.get("custom_id") if isinstance(item, dict) else None
            if not isinstance(custom_id, str) or not CUSTOM_ID.match(custom_id):
                return api_error(400, "invalid_request_error", f"requests.{i}.custom_id: must "
                                 "match ^[a-zA-Z0-9_-]{1,64}$")
            if custom_id in seen:
                return api_error(400, "invalid_request_error",
                                 f"requests.{i}.custom_id: {custom_id!r} is used twice")
            if not isinstance(item.get("params"), dict):
                return api_error(400, "invalid_request_error", f"requests.{i}.params: missing")
            seen.add(custom_id)
        with self._lock:
            batch = FakeBatch(id=f"msgbatch_fake_{len(self.batches) + 1:04d}",
                              created=time.monotonic(), created_at=datetime.now(UTC),
                              requests=list(requests),
                              outcomes=[self._draw() for _ in requests])
            self.batches[batch.id] = batch
        return self._object(batch)

    def retrieve(self, batch_id: str) -> Reply:
        batch = self.batches.get(batch_id)
        return self._object(batch) if batch else self._unknown(batch_id)

    def results(self, batch_id: str) -> Reply:
        batch = self.batches.get(batch_id)
        if batch is None:
            return self._unknown(batch_id)
        lines = self._finish(batch)
        if lines is None:
            return api_error(400, "invalid_request_error",
                             f"batch {batch_id} is still processing; its results are not ready")
        payload = "".join(json.dumps(line) + "\n" for line in lines).encode()
        return Reply(200, payload, content_type="application/binary")

    def cancel(self, batch_id: str) -> Reply:
        batch = self.batches.get(batch_id)
        if batch is None:
            return self._unknown(batch_id)
        with self._lock:
            if batch.lines is None:
                batch.canceled = True
        return self._object(batch, status="canceling" if batch.lines is None else None)

    # ---- state ----

    def _draw(self) -> ItemOutcome:
        index = self._items
        self._items += 1
        if index < len(self.outcomes) and self.outcomes[index] is not None:
            return self.outcomes[index]  # type: ignore[return-value]
        roll = self._rng.random()
        if roll < self.error_rate:
            return self._rng.choice(self.error_kinds)
        if roll < self.error_rate + self.expire_rate:
            return ItemOutcome.EXPIRED
        return ItemOutcome.SUCCEEDED

    def _finish(self, batch: FakeBatch) -> list[dict[str, Any]] | None:
        """The result lines once the batch has ended (computed once, in request order)."""
        with self._lock:
            if batch.lines is not None:
                return batch.lines
            if not batch.canceled and time.monotonic() < batch.created + self.delay:
                return None
            lines = []
            for n, (item, outcome) in enumerate(zip(batch.requests, batch.outcomes,
                                                    strict=True)):
                if batch.canceled:
                    outcome = ItemOutcome.CANCELED
                lines.append({"custom_id": item["custom_id"],
                              "result": self._result(batch, n, item["params"], outcome)})
            batch.lines = lines[::-1]  # results come in no particular order
            return batch.lines

    def _result(self, batch: FakeBatch, n: int, params: Mapping[str, Any],
                outcome: ItemOutcome) -> dict[str, Any]:
        if outcome is ItemOutcome.SUCCEEDED:
            refused = reject("api", str(params.get("model", "")), params)
            if refused is None:
                message = self._answer(params, str(params.get("model", "")),
                                       f"msg_{batch.id}_{n}")
                message.setdefault("usage", {})["service_tier"] = "batch"
                return {"type": "succeeded", "message": message}
            outcome, said = ItemOutcome.INVALID, json.loads(refused.body)["error"]["message"]
        else:
            said = f"injected batch item fault {outcome.value}"
        if outcome.result_type != "errored":
            return {"type": outcome.result_type}
        return {"type": "errored", "error": {"type": "error", "request_id": "req_fake_batch",
                                             "error": {"type": outcome.value, "message": said}}}

    def _object(self, batch: FakeBatch, status: str | None = None) -> Reply:
        lines = self._finish(batch)
        counts = dict.fromkeys(COUNTS, 0)
        if lines is None:
            counts["processing"] = len(batch.requests)
        else:
            for line in lines:
                counts[line["result"]["type"]] += 1
        ended = None if lines is None else batch.created_at + timedelta(seconds=self.delay)
        body = {
            "id": batch.id, "type": "message_batch",
            "processing_status": status or ("in_progress" if lines is None else "ended"),
            "request_counts": counts, "created_at": _stamp(batch.created_at),
            "expires_at": _stamp(batch.created_at + timedelta(hours=24)),
            "ended_at": _stamp(ended), "archived_at": None,
            "cancel_initiated_at": _stamp(batch.created_at) if batch.canceled else None,
            "results_url": None if lines is None else f"{self._url()}{PREFIX}/{batch.id}/results",
        }
        return Reply(200, json.dumps(body).encode())

    @staticmethod
    def _unknown(batch_id: str) -> Reply:
        return api_error(404, "not_found_error", f"no message batch {batch_id!r}")
