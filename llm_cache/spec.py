"""Model spec strings → provider, model id to send, and the canonical id that enters the key.

Accepted forms (options after `?` as `k=v&k=v`):

    anthropic:<model>                 e.g. anthropic:claude-haiku-4-5
    bedrock:<bedrock model id>        e.g. bedrock:global.anthropic.claude-haiku-4-5-20251001-v1:0?region=us-east-1
    openai:<model>@<base_url>         e.g. openai:qwen2.5-coder:1.5b@http://gpu-node:8000/v1?n_ctx=4096
    llamacpp:<gguf path>              e.g. llamacpp:models/smollm2.gguf?threads=2&mode=reset&n_ctx=4096

The canonical id is what `Request.model` should hold: Bedrock and API ids of the same Claude
model map to one canonical id, so a run recorded on Bedrock replays against the API.
"""

from __future__ import annotations

import math
import unicodedata
from urllib.parse import parse_qsl

import attrs

from llm_cache.errors import SpecError
from llm_cache.model_spec import ModelSpec, Options
from llm_cache.providers import _FORMS, PROVIDERS

# Numeric options and the least value each accepts: a zero concurrency would never send a call,
# a zero or negative timeout would fail every call after a long round of retries, a window
# (n_ctx) below MIN_CONTEXT holds no prompt and reply. Small windows are legitimate (a tiny
# model, or the tests that make a request overflow its window on purpose at 144 tokens).
MIN_CONTEXT = 64
WHOLE_AT_LEAST = {"concurrency": 1, "max_retries": 0, "threads": 1, "n_ctx": MIN_CONTEXT,
                  "seed": 0, "batch_min": 1, "batch_resubmits": 0}
# ... and the most: beyond these a value is a typo, not a setting (a week of seconds, a window
# of 10^8 tokens, a retry count that would wait for days).
WHOLE_AT_MOST = {"concurrency": 4096, "max_retries": 100, "threads": 1024, "n_ctx": 10**8,
                 "seed": 2**63 - 1, "batch_min": 100_000, "batch_resubmits": 100}
MAX_CONCURRENCY = WHOLE_AT_MOST["concurrency"]  # --concurrency too: more is a typo, not a pool
SECONDS = ("timeout", "connect_timeout", "batch_poll", "batch_poll_max")
MAX_SECONDS = 7 * 24 * 3600.0
# Options that must not be empty (`?api_key=` would send no key and fail as a connection error).
NOT_EMPTY = ("api_key", "auth_header", "region", "aws_region", "endpoint",
             "bedrock_anthropic_version", "mode", "temperature", "prompt_caching", "batch", "http")


def check_options(spec: str, options: tuple[tuple[str, str], ...]) -> None:
    """Each numeric option is a number in its range; one line naming the spec and the option."""
    for name, value in options:
        if name == "seed" and value.lower() == "none":
            continue  # an OpenAI-compatible server that refuses a seed gets none
        if name in NOT_EMPTY and not value.strip():
            raise SpecError(f"model spec {spec!r}: {name}= is empty; give a value or leave "
                            f"{name} out")
        if name in WHOLE_AT_LEAST:
            low, high = WHOLE_AT_LEAST[name], WHOLE_AT_MOST[name]
            try:
                ok = low <= int(value) <= high
            except ValueError:
                ok = False
            if not ok:
                raise SpecError(f"model spec {spec!r}: {name}={value!r} must be a whole number "
                                f">= {low} (at most {high})")
        elif name in SECONDS:
            try:
                seconds = float(value)
            except ValueError:
                seconds = math.nan
            if not (math.isfinite(seconds) and 0 < seconds <= MAX_SECONDS):
                raise SpecError(f"model spec {spec!r}: {name}={value!r} must be a number of "
                                f"seconds above 0 (at most {MAX_SECONDS:.0f})")


def _check_names(spec: str, provider: str, body: str, options: Options) -> None:
    """No space around the spec or inside a model name (it would be sent as part of the name
    and answered with a 404 after retries); only options the provider takes."""
    if spec != spec.strip() or provider != provider.strip():
        raise SpecError(f"model spec {spec!r}: remove the spaces around it")
    row = PROVIDERS.get(provider)
    model = row.model_name(body) if row is not None else body
    if model != model.strip() or (not (row is not None and row.spaced_names)
                                  and any(c.isspace() for c in model)):
        raise SpecError(f"model spec {spec!r}: the model name {model!r} holds a space; "
                        "remove it")
    for where, text in (("the model name", model),
                        *((f"option {name}=", f"{name}={value}") for name, value in options)):
        if hidden := next((c for c in text if _hidden(c)), None):
            raise SpecError(f"model spec {spec!r}: {where} holds the invisible character "
                            f"U+{ord(hidden):04X}; retype it")
    known = PROVIDERS[provider].options if provider in PROVIDERS else None
    names = [name for name, _ in options]
    if twice := next((name for name in names if names.count(name) > 1), None):
        raise SpecError(f"model spec {spec!r}: {twice}= is given twice; keep one")
    for name, _ in options:
        if known is not None and name not in known:
            raise SpecError(f"model spec {spec!r}: {provider} models take no option {name!r}; "
                            f"use {', '.join(sorted(known))}")


def _hidden(char: str) -> bool:
    """A character that shows as nothing or moves the text (a zero-width space, a
    direction mark, a control character): a model name holding one is sent as another name and
    answered with a 404 after a round of retries."""
    return unicodedata.category(char) in ("Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp")


def parse_spec(spec: str) -> ModelSpec:
    """The spec string checked and parsed: done once, where a spec enters (the model layer's
    `backend_for`, the shell's `replay.models.specs.resolve`), and the `ModelSpec` passed down
    (tests/test_model_spec_edges.py lists the callers)."""
    if spec != spec.strip():
        raise SpecError(f"model spec {spec!r}: remove the spaces around it")
    provider, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise SpecError(f"model spec {spec!r} is not understood; use {_FORMS}")
    if provider not in PROVIDERS:
        raise SpecError(f"model spec {spec!r}: unknown provider {provider!r}; use one of "
                        f"{', '.join(PROVIDERS)} ({_FORMS})")
    body, _, query = rest.partition("?")
    try:
        options = tuple(parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)))
    except ValueError:
        raise SpecError(f"model spec {spec!r}: options after '?' must be k=v&k=v") from None
    _check_names(spec, provider, body, options)
    check_options(spec, options)
    return attrs.evolve(PROVIDERS[provider].parse(spec, provider, body, options), text=spec)
