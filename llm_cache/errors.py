"""Errors of the model layer. Every message is one line that says what to do.

`llm_cache` is the bottom package (the core builds its requests from `llm_cache.records`), so the
root of the project's exception family lives here and `stratune_core.records.errors` re-exports it:
`llm_cache` never imports the core or the shell.
"""

from __future__ import annotations


class StraTuneError(Exception):
    """Base of every error the library raises on purpose (exit code 2 on the command line)."""


class LLMError(StraTuneError):
    """Base of every error raised on purpose by `llm_cache`."""


class LLMFatalError(LLMError):
    """A call failed for good (bad credentials, bad request, retries exhausted).

    Nothing was cached for the failing request; whatever succeeded before is in the cache, so
    the run can be resumed.
    """


class CacheMiss(LLMError):
    """Strict replay asked for a request that is not in the cache."""

    def __init__(self, message: str, *, key: str, nearest_key: str | None,
                 differing_fields: tuple[str, ...]) -> None:
        super().__init__(message)
        self.key = key
        self.nearest_key = nearest_key
        self.differing_fields = differing_fields


class CacheCorruptError(LLMError):
    """A stored entry failed its checksum or does not match its key (strict replay only)."""


class TransientLLMError(LLMError):
    """Raised by a scripted backend function to simulate a retryable transport failure."""

    def __init__(self, message: str = "transient failure", *, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class SpecError(LLMError):
    """A model spec string cannot be parsed; the message shows the accepted forms."""
