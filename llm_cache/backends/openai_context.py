"""What OpenAI-compatible servers say about their context window, and how they refuse a request
that does not fit it.

Wordings recognised (checked against the servers' sources and user reports, 2026):

- vLLM, older: "This model's maximum context length is 4096 tokens. However, you requested 4726
  tokens (3726 in the messages, 1000 in the completion). ..." (also llama-cpp-python's server).
- vLLM, newer: "'max_tokens' or 'max_completion_tokens' is too large: 1000. This model's maximum
  context length is 1000 tokens and your request has 203 input tokens (1000 > 1000 - 203)";
  "... However, your request has 203 input tokens. ..."; "... However, you requested 65535
  output tokens and your prompt contains at least 62466 input tokens, ...".
- llama.cpp `llama-server`: `{"error": {"type": "exceed_context_size_error", "message": "the
  request exceeds the available context size, ...", "n_prompt_tokens": 1407, "n_ctx": 256}}`
  (HTTP 400; 500 before late 2025).
- ollama: "the input length exceeds the context length" (no figures). ollama's chat endpoints
  usually cut the prompt to `num_ctx` silently instead, which no client can see.

vLLM reports its window as `max_model_len` in `GET /v1/models`, and counts a chat's tokens with
`POST /tokenize` (`{"count": ..., "max_model_len": ...}`).
"""

from __future__ import annotations

import json
import re
from typing import Any

import attrs

_CONTEXT = re.compile(r"maximum context length is (\d+)", re.I)
_PROMPT = (
    re.compile(r"\((\d+) in the messages", re.I),
    re.compile(r"\((\d+) in your prompt", re.I),
    re.compile(r"request has (\d+) input tokens", re.I),
    re.compile(r"contains at least (\d+) input tokens", re.I),
)
_PHRASES = (
    "maximum context length",
    "exceed_context_size_error",
    "exceeds the available context size",
    "context_length_exceeded",
    "input length exceeds the context length",
    "is longer than the model's context length",
    "is longer than the maximum model length",
)


@attrs.frozen
class Overflow:
    """A server's refusal of a request too long for its context; figures when it gave them."""

    context: int | None
    prompt_tokens: int | None
    message: str


def parse_overflow(body: str) -> Overflow | None:
    """The overflow a refusal body describes, or None when it is some other error."""
    lowered = body.lower()
    if not any(phrase in lowered for phrase in _PHRASES):
        return None
    data = _json(body)
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and "n_ctx" in error:  # llama-server names both figures
        return Overflow(context=_int(error.get("n_ctx")), prompt_tokens=_int(
            error.get("n_prompt_tokens")), message=str(error.get("message", "")))
    message = _message(data) or body
    context = _CONTEXT.search(message)
    prompt = next((m for p in _PROMPT if (m := p.search(message))), None)
    return Overflow(context=int(context.group(1)) if context else None,
                    prompt_tokens=int(prompt.group(1)) if prompt else None,
                    message=" ".join(message.split()))


def window_from_models(data: Any, model: str) -> int | None:
    """`max_model_len` of `model` (or of the only model served) in a `/v1/models` listing."""
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    cards = [e for e in entries if isinstance(e, dict)]
    chosen = [e for e in cards if e.get("id") == model] or (cards if len(cards) == 1 else [])
    return _int(chosen[0].get("max_model_len")) if chosen else None


def count_from_tokenize(data: Any) -> int | None:
    return _int(data.get("count")) if isinstance(data, dict) else None


def prompt_bound(body: dict[str, Any]) -> int:
    """An upper bound on the prompt's tokens without a tokenizer: every token of a byte-level
    vocabulary spans at least one byte, plus a few template tokens per message."""
    text = json.dumps(body["messages"], ensure_ascii=False)
    return len(text.encode("utf-8")) + 8 * len(body["messages"]) + 16


def server_root(base_url: str) -> str:
    base = base_url.rstrip("/")
    return base.removesuffix("/v1")


def _message(data: Any) -> str:
    if not isinstance(data, dict):
        return ""
    error = data.get("error")
    if isinstance(error, dict):
        return str(error.get("message", ""))
    if isinstance(error, str):
        return error
    return str(data.get("message", ""))


def _json(body: str) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
