"""Which failures of the Anthropic API or Bedrock are worth another attempt, in one line each.

The order of the checks is the policy:

1. A spend cap stops the run. The API says so in the body: HTTP 429 `rate_limit_error` with
   `error.details.error_code` `enforced_spend_limit_reached` (the usage tier's monthly cap) or
   `contract_spend_limit_reached`; SDK 2.x raises `EnforcedSpendLimitReachedError` /
   `ContractSpendLimitReachedError` for them. Retrying fails until the date in the message.
2. `x-should-retry: true|false` is obeyed exactly as the SDK's `_should_retry` does.
3. Any other 429 is a rate limit and is retried: with the server's `retry-after` when it sends
   one, with backoff and jitter when it does not. Bedrock's `ThrottlingException` and
   `ModelNotReadyException` are 429s without `retry-after`, and AWS says to retry both.
4. 408, 409 and 5xx are retried; other 4xx stop with a hint.

An errored Message Batch item goes through the same checks (`classify_batch_error`), with the
status a live call gets for its error type.
"""

from __future__ import annotations

import email.utils
import json
import time
from typing import Any

from llm_cache.backends.anthropic_params import MalformedResponse
from llm_cache.retry import RetryDecision

SPEND_CAP_CODES = frozenset({"enforced_spend_limit_reached", "contract_spend_limit_reached"})
MAX_REASON = 240
# The HTTP status of each error type on a live call (docs: api/errors), for batch items, which
# carry the type but no status.
ERROR_STATUS = {
    "invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
    "permission_error": 403, "not_found_error": 404, "conflict_error": 409,
    "request_too_large": 413, "rate_limit_error": 429, "api_error": 500, "timeout_error": 504,
    "overloaded_error": 529,
}


def retry_after(headers: Any) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (seconds or an HTTP date), as the SDK."""
    if headers is None:
        return None
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return None if parsed is None else max(0.0, parsed.timestamp() - time.time())


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 3] + "..."


def _field(body: Any, *path: str) -> Any:
    for name in path:
        if not isinstance(body, dict):
            return None
        body = body.get(name)
    return body


def error_code(exc: Any) -> str | None:
    """`error.details.error_code` (SDK 2.x has it as an attribute; 1.x only in the body)."""
    code = getattr(exc, "error_code", None) or _field(exc.body, "error", "details", "error_code")
    return code if isinstance(code, str) else None


def describe_status(exc: Any) -> str:
    """`HTTP 429 ThrottlingException: Too many requests, ...` from an `APIStatusError`."""
    headers = getattr(exc.response, "headers", None) or {}
    aws_type = (headers.get("x-amzn-errortype") or "").split(":", 1)[0]
    kind = aws_type or _field(exc.body, "error", "type") or ""
    said = _field(exc.body, "error", "message") or _field(exc.body, "message")
    if said is None:
        said = exc.body if isinstance(exc.body, str) else ""
    return _one_line(f"HTTP {exc.status_code} {kind}".strip() + (f": {said}" if said else ""))


def _hint(status: int, text: str, *, proxy: str | None, auth_header: str) -> str:
    if status == 401 and proxy is not None and auth_header == "bearer":
        return (f"the endpoint {proxy} refused the key; SDK 2.x sends it as 'Authorization: "
                "Bearer', and a proxy may expect 'x-api-key': add ?auth_header=x-api-key to "
                "the model spec")
    if status == 400 and "usage limits" in text:
        return "a spend limit set in the Claude Console is reached; raise it or wait"
    return {401: "check the API key (or AWS credentials)",
            403: "check the key's permissions and the model access",
            404: "check the model id and region", 413: "the request is too large",
            }.get(status, "fix the request")


def _by_status(status: int, text: str, *, code: str | None, after: float | None,
               should: str | None, proxy: str | None, auth_header: str) -> RetryDecision:
    if status == 429 and code in SPEND_CAP_CODES:
        return RetryDecision.no(f"{text} [{code}]; spend cap reached: raise the limit or "
                                "wait for the date given, then rerun (finished calls are "
                                "cached)")
    if should == "false":
        return RetryDecision.no(f"{text}; the server says not to retry (x-should-retry)")
    if status == 429:
        return RetryDecision.rate_limit(text, after)
    if should == "true" or status in (408, 409) or status >= 500:
        return RetryDecision.transient(text, after)
    hint = _hint(status, text, proxy=proxy, auth_header=auth_header)
    return RetryDecision.no(f"{text}; {hint}")


def classify_batch_error(error: Any, *, proxy: str | None = None,
                         auth_header: str = "bearer") -> RetryDecision:
    """An errored Message Batch item, judged as the live call with that error would be.

    The item carries the API's error envelope (`{"type": "error", "error": {"type": ...,
    "message": ...}}`) without an HTTP status; the status is the one the API gives that error
    type on a live call (docs: api/errors).
    """
    inner = _field(error, "error") if _field(error, "type") == "error" else error
    kind = _field(inner, "type") or "api_error"
    said = _field(inner, "message") or ""
    code = _field(inner, "details", "error_code")
    status = ERROR_STATUS.get(kind, 500)
    text = _one_line(f"batch item {kind} (HTTP {status} on a live call)"
                     + (f": {said}" if said else ""))
    return _by_status(status, text, code=code if isinstance(code, str) else None, after=None,
                      should=None, proxy=proxy, auth_header=auth_header)


def classify_anthropic(exc: BaseException, *, proxy: str | None = None,
                       auth_header: str = "bearer") -> RetryDecision:
    """`proxy`: the base URL when it is not the provider's own (for the 401 hint)."""
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        should = exc.response.headers.get("x-should-retry") if exc.response is not None else None
        return _by_status(exc.status_code, describe_status(exc), code=error_code(exc),
                          after=retry_after(getattr(exc.response, "headers", None)),
                          should=should, proxy=proxy, auth_header=auth_header)
    if isinstance(exc, anthropic.APIConnectionError):  # includes APITimeoutError
        return RetryDecision.transient(_one_line(f"{type(exc).__name__}: {exc}"))
    if isinstance(exc, MalformedResponse):
        return RetryDecision.no(f"{exc}; the base URL does not reach a Messages API (a proxy "
                                "login page?): check ANTHROPIC_BASE_URL or ?base_url=")
    if isinstance(exc, anthropic.APIResponseValidationError | json.JSONDecodeError):
        # A truncated JSON body: the transport failed, the model did not.
        return RetryDecision.transient(f"malformed response: {type(exc).__name__}")
    if isinstance(exc, ModuleNotFoundError) and exc.name in ("botocore", "boto3"):
        return RetryDecision.no(f"AWS SigV4 signing needs {exc.name}: pip install "
                                "'stratune[bedrock]', or use a Bedrock API key "
                                "(AWS_BEARER_TOKEN_BEDROCK)")
    return RetryDecision.no(_one_line(f"{type(exc).__name__}: {exc}"))
