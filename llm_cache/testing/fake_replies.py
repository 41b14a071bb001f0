"""What the fake Messages API server answers when it does not answer with a message.

Each fault reproduces the status, headers and body shape of the real service, so the real SDK
raises what it would raise in production:

- the Claude API's JSON error envelope (`{"type":"error","error":{...},"request_id":...}`), with
  `error.details.error_code` for the tier spend cap (docs: api/rate-limits);
- Bedrock's errors (`x-amzn-ErrorType: <Name>:...` header, body `{"message": ...}`), e.g. the
  429 `ThrottlingException` and `ModelNotReadyException`, which carry no `retry-after`;
- a proxy that wants `x-api-key`, and a 200 whose body is an HTML page.

`reject(...)` validates a request as the real endpoints do: whitespace-only text blocks are a
400 everywhere, and a Bedrock invoke body needs an `anthropic_version` the model accepts. Where
the services' exact wording is not documented (Bedrock's message for a refused version), the
status, error name and body shape are theirs and the sentence is ours.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from typing import Any

import attrs

from llm_cache.backends.bedrock import LEGACY_VERSION, is_legacy_invoke_model

AWS_ERROR_SUFFIX = ":http://internal.amazon.com/coral/com.amazon.bedrock/"


class Fault(enum.Enum):
    RATE_LIMIT = "429"  # with retry-after: 0
    SPEND_CAP = "429-spend-cap"  # enforced_spend_limit_reached, no retry-after
    BEDROCK_THROTTLING = "429-bedrock-throttling"  # ThrottlingException, no retry-after
    BEDROCK_NOT_READY = "429-bedrock-model-not-ready"  # ModelNotReadyException
    OVERLOADED = "529"
    SERVER_ERROR = "500"
    BAD_REQUEST = "400"
    UNAUTHORIZED = "401"
    CONNECTION_RESET = "reset"  # close the socket without answering
    STALL = "stall"  # answer nothing for `stall_seconds`, then close
    TRUNCATED_JSON = "truncated"  # 200 with half a JSON body
    NOT_JSON = "200-html"  # 200 with an HTML page, as from a captive portal or a wrong URL


@attrs.frozen
class Reply:
    status: int
    body: bytes
    headers: Mapping[str, str] = attrs.field(factory=dict)
    content_type: str = "application/json"


def api_error(status: int, kind: str, message: str, *, code: str | None = None,
              headers: Mapping[str, str] | None = None) -> Reply:
    error: dict[str, Any] = {"type": kind, "message": message}
    if code is not None:
        error["details"] = {"error_code": code}
    body = {"type": "error", "error": error, "request_id": "req_fake"}
    return Reply(status, json.dumps(body).encode(), dict(headers or {}))


def aws_error(status: int, name: str, message: str) -> Reply:
    return Reply(status, json.dumps({"message": message}).encode(),
                 {"x-amzn-ErrorType": name + AWS_ERROR_SUFFIX, "x-amzn-RequestId": "fake-aws"})


SPEND_CAP_MESSAGE = (
    "You have reached your API usage limits: your organization has crossed its monthly API "
    "usage threshold, set based on your organization's API tier. You will regain access on "
    "2026-12-01 at 00:00 UTC."
)

_FAULT_REPLIES: Mapping[Fault, Reply] = {
    Fault.RATE_LIMIT: api_error(429, "rate_limit_error", "injected fault 429",
                                headers={"retry-after": "0"}),
    Fault.SPEND_CAP: api_error(429, "rate_limit_error", SPEND_CAP_MESSAGE,
                               code="enforced_spend_limit_reached"),
    Fault.BEDROCK_THROTTLING: aws_error(429, "ThrottlingException",
                                        "Too many requests, please wait before trying again."),
    Fault.BEDROCK_NOT_READY: aws_error(429, "ModelNotReadyException", "The model specified in "
                                       "the request is not ready to serve inference requests."),
    Fault.OVERLOADED: api_error(529, "overloaded_error", "injected fault 529"),
    Fault.SERVER_ERROR: api_error(500, "api_error", "injected fault 500"),
    Fault.BAD_REQUEST: api_error(400, "invalid_request_error", "injected fault 400"),
    Fault.UNAUTHORIZED: api_error(401, "authentication_error", "invalid x-api-key"),
    Fault.NOT_JSON: Reply(200, b"<html><body><h1>Sign in to continue</h1></body></html>",
                          content_type="text/html; charset=utf-8"),
}


def fault_reply(fault: Fault, extra_headers: Mapping[str, str] | None = None) -> Reply | None:
    """The canned reply of a fault; None for faults played on the socket (reset, stall, ...)."""
    reply = _FAULT_REPLIES.get(fault)
    if reply is None or not extra_headers:
        return reply
    return attrs.evolve(reply, headers={**reply.headers, **extra_headers})


def proxy_unauthorized() -> Reply:
    """What an API gateway that reads only `x-api-key` answers to `Authorization: Bearer`."""
    body = {"error": {"message": "Authentication Error, no api key passed in x-api-key",
                      "type": "auth_error", "code": "401"}}
    return Reply(401, json.dumps(body).encode())


def _blank_text_field(body: Mapping[str, Any]) -> str | None:
    system = body.get("system")
    if isinstance(system, str) and system and not system.strip():
        return "system"
    if isinstance(system, list) and any(
            b.get("type") == "text" and not str(b.get("text", "")).strip() for b in system):
        return "system"
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not content or any(b.get("type") == "text" and not str(b.get("text", "")).strip()
                              for b in content):
            return "messages"
    return None


def reject(route: str, model: str, body: Mapping[str, Any]) -> Reply | None:
    """The 400 the real endpoint gives this request, or None when it is valid.

    route: "api" (`/v1/messages`, also Mantle's `/anthropic/v1/messages`) or "invoke".
    """
    where = _blank_text_field(body)
    if route == "invoke":
        if "model" in body:
            return aws_error(400, "ValidationException", "Malformed input request: "
                             "#: extraneous key [model] is not permitted")
        version = body.get("anthropic_version")
        if version is None:
            return aws_error(400, "ValidationException", "Malformed input request: "
                             "#: required key [anthropic_version] not found")
        if is_legacy_invoke_model(model) and version != LEGACY_VERSION:
            return aws_error(400, "ValidationException",
                             f"invalid anthropic_version {version!r} for model {model}")
        if where is not None:
            return aws_error(400, "ValidationException",
                             f"{where}: text content blocks must contain non-whitespace text")
        return None
    if where is not None:
        return api_error(400, "invalid_request_error",
                         f"{where}: text content blocks must contain non-whitespace text")
    return None
