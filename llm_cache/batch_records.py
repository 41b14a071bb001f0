"""What the Message Batches path passes around: its options, a batch's status, one item's result,
and the protocol a backend implements to take batches (pure data, no I/O).

A backend takes batches when its `batch` attribute holds `BatchOptions` (the spec said
`batch=on`); the client then sends the misses of one `complete` call to that backend as one
Message Batch, and waves smaller than `min_size` live.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from llm_cache.backends.base import BackendBase
from llm_cache.model_spec import flag
from llm_cache.records import Request, Response
from llm_cache.retry import RetryDecision

# The Message Batches API's own limit on one batch (the other limit, 256 MB, is far beyond a
# wave of target executions).
MAX_BATCH_REQUESTS = 100_000
OPTION_NAMES = ("batch", "batch_min", "batch_poll", "batch_poll_max", "batch_resubmits")


@attrs.frozen(kw_only=True)
class BatchOptions:
    """min_size: smaller waves go live. poll: first wait between status checks, growing by
    half each time up to poll_max. resubmits: how often an expired request is sent again."""

    min_size: int = attrs.field(default=8, validator=attrs.validators.ge(1))
    poll: float = attrs.field(default=5.0, validator=attrs.validators.gt(0))
    poll_max: float = attrs.field(default=60.0, validator=attrs.validators.gt(0))
    resubmits: int = attrs.field(default=2, validator=attrs.validators.ge(0))

    @classmethod
    def take(cls, options: MutableMapping[str, Any]) -> BatchOptions | None:
        """Remove the batch options from backend options; None when batches are off."""
        given = {name: options.pop(name) for name in OPTION_NAMES if name in options}
        enabled = flag("batch", given.pop("batch", "off"))
        if not enabled:
            if given:
                raise ValueError(f"{', '.join(sorted(given))} apply with batch=on only")
            return None
        if isinstance(given.get("batch_min"), bool):  # batch_min=True is not a number
            raise ValueError("batch_min must be a number")
        return cls(min_size=int(given.get("batch_min", 8)),
                   poll=float(given.get("batch_poll", 5.0)),
                   poll_max=float(given.get("batch_poll_max", 60.0)),
                   resubmits=int(given.get("batch_resubmits", 2)))


class ItemKind(enum.Enum):
    """The four result types of a Message Batch request."""

    SUCCEEDED = "succeeded"
    ERRORED = "errored"
    CANCELED = "canceled"
    EXPIRED = "expired"


@attrs.frozen(kw_only=True)
class ItemResult:
    custom_id: str
    kind: ItemKind
    response: Response | None = None  # SUCCEEDED only
    error: Mapping[str, Any] = attrs.field(factory=dict)  # ERRORED: the API's error object


@attrs.frozen(kw_only=True)
class BatchStatus:
    batch_id: str
    processing_status: str  # in_progress | canceling | ended
    counts: Mapping[str, int] = attrs.field(factory=dict)  # processing, succeeded, errored, ...

    @property
    def ended(self) -> bool:
        return self.processing_status == "ended"

    def describe(self) -> str:
        shown = ", ".join(f"{n} {k}" for k, n in self.counts.items() if n)
        return f"{self.processing_status}" + (f" ({shown})" if shown else "")


@runtime_checkable
class BatchBackend(Protocol):
    """A backend that can send a wave as one batch. Each method is one attempt (no retries);
    failures raise the provider's exceptions, which `classify` judges like a live call's."""

    name: str
    batch: BatchOptions | None

    async def batch_create(self, items: Sequence[tuple[str, Request]]) -> str:
        """Submit (custom_id, request) pairs; return the batch id."""
        ...

    async def batch_status(self, batch_id: str) -> BatchStatus: ...

    async def batch_results(self, batch_id: str) -> list[ItemResult]: ...

    def classify(self, exc: BaseException) -> RetryDecision: ...

    def classify_item(self, error: Mapping[str, Any]) -> RetryDecision:
        """Whether an errored item is worth sending again, by the rules of a live call."""
        ...


def batch_options(backend: object) -> BatchOptions | None:
    """The backend's batch options, or None when it sends every call live."""
    options = backend.batch if isinstance(backend, BackendBase) else None
    return options if isinstance(options, BatchOptions) and isinstance(
        backend, BatchBackend) else None
