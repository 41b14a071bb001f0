"""The one retry layer. Backends classify exceptions; only this module waits and tries again.

SDK-level retries are switched off in every backend, so each retry here is one real resend and
the count in accounting is exact. Every retry is announced with one WARNING on the
`llm_cache.retry` logger (what failed, the wait, the attempt): the shell shows those lines on
its console; a library user sees them through `logging` like any other warning.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

import attrs

from llm_cache.errors import LLMFatalError

T = TypeVar("T")

log = logging.getLogger(__name__)


class RetryKind(enum.Enum):
    NO = "no"
    TRANSIENT = "transient"  # 5xx, 529, timeouts, resets, malformed bodies
    RATE_LIMIT = "rate_limit"  # 429 (a spend cap is NO), with or without a retry-after


@attrs.frozen(kw_only=True)
class RetryDecision:
    kind: RetryKind
    reason: str
    retry_after: float | None = None

    @classmethod
    def no(cls, reason: str) -> RetryDecision:
        return cls(kind=RetryKind.NO, reason=reason)

    @classmethod
    def transient(cls, reason: str, retry_after: float | None = None) -> RetryDecision:
        return cls(kind=RetryKind.TRANSIENT, reason=reason, retry_after=retry_after)

    @classmethod
    def rate_limit(cls, reason: str, retry_after: float | None = None) -> RetryDecision:
        return cls(kind=RetryKind.RATE_LIMIT, reason=reason, retry_after=retry_after)

    @property
    def retry(self) -> bool:
        return self.kind is not RetryKind.NO


@attrs.frozen(kw_only=True)
class RetryPolicy:
    max_retries: int = attrs.field(default=6, validator=attrs.validators.ge(0))
    base_delay: float = 0.5
    # A throttle without retry-after (Bedrock's ThrottlingException) is a per-minute quota:
    # 2, 4, 8, 16, 30, 30 s waits outlast a minute, 0.5 s steps would give up in half of one.
    rate_limit_base_delay: float = 2.0
    max_delay: float = 30.0
    # A server asking for a longer pause than this is treated as a hard stop, not waited out.
    max_retry_after: float = 120.0

    def delay(self, attempt: int, decision: RetryDecision, rng: random.Random) -> float:
        if decision.retry_after is not None:
            return max(0.0, decision.retry_after)
        base = self.rate_limit_base_delay if decision.kind is RetryKind.RATE_LIMIT \
            else self.base_delay
        # Exponential backoff with jitter in [0.75, 1] so a burst of failures spreads out.
        return min(base * 2**attempt, self.max_delay) * rng.uniform(0.75, 1.0)


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    classify: Callable[[BaseException], RetryDecision],
    policy: RetryPolicy,
    rng: random.Random,
    on_retry: Callable[[RetryDecision], None],
    what: str,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> tuple[T, int]:
    """Run `call` until it succeeds; return (result, retries). Raise LLMFatalError otherwise."""
    attempt = 0
    while True:
        try:
            return await call(), attempt
        except LLMFatalError:
            raise
        except Exception as exc:  # every failure is classified; none is swallowed
            decision = classify(exc)
            if not decision.retry:
                raise LLMFatalError(f"{what}: {decision.reason} (not retried)") from exc
            if attempt >= policy.max_retries:
                raise LLMFatalError(
                    f"{what}: gave up after {attempt} retries, last error: {decision.reason}; "
                    "rerun later (finished calls are cached) or raise max_retries"
                ) from exc
            if decision.retry_after is not None and decision.retry_after > policy.max_retry_after:
                raise LLMFatalError(
                    f"{what}: server asks to wait {decision.retry_after:.0f} s "
                    f"({decision.reason}); rerun later (finished calls are cached)"
                ) from exc
            on_retry(decision)
            wait = policy.delay(attempt, decision, rng)
            log.warning("retry %d/%d in %.1f s: %s: %s", attempt + 1, policy.max_retries, wait,
                        what, decision.reason)
            await sleep(wait)
            attempt += 1
