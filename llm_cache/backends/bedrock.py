"""Claude on Amazon Bedrock: which endpoint a `bedrock:` spec uses and which `anthropic_version`.

The anthropic SDK offers two ways in:

- `endpoint=invoke` (default): `AnthropicBedrock`, `POST /model/{id}/invoke` on bedrock-runtime.
  The version travels in the body. SDK 2.x fills in its own API version, `2026-10-21`, and the
  ARN-versioned models of the legacy integration do not accept it ("Claude on Amazon Bedrock
  (Opus 4.6 and earlier)", warning at the top of the page). For those models we send
  `bedrock-2023-05-31`, the value Bedrock's own InvokeModel examples use; newer models served
  on the same path keep the SDK's version.
- `endpoint=mantle`: `AnthropicBedrockMantle`, the Messages API at
  `bedrock-mantle.{region}.api.aws/anthropic` ("Claude in Amazon Bedrock": Opus 4.7, 4.8,
  Haiku 4.5 and later). The version is a header, as on the Claude API; there is no body field.

`resolve_spec` writes the choice into the spec string, so the run manifest records it.
"""

from __future__ import annotations

import re

from llm_cache.errors import SpecError
from llm_cache.model_spec import ModelSpec, canonical_claude

LEGACY_VERSION = "bedrock-2023-05-31"
SDK_VERSION = "sdk"  # option value: send whatever version the installed SDK sends
VERSION_OPTION = "bedrock_anthropic_version"
ENDPOINTS = ("invoke", "mantle")

# Canonical ids of the models in the legacy page's model table (ARN-versioned model ids).
LEGACY_INVOKE_MODELS = frozenset({
    "claude-opus-4-6", "claude-sonnet-4-6", "claude-sonnet-4-5-20250929",
    "claude-sonnet-4-20250514", "claude-3-7-sonnet-20250219", "claude-opus-4-5-20251101",
    "claude-opus-4-1-20250805", "claude-opus-4-20250514", "claude-haiku-4-5-20251001",
    "claude-3-5-haiku-20241022",
})
# `...-v1:0`, `...-v1`: the ARN version suffix marks a legacy id even for a model not listed.
_ARN_VERSION = re.compile(r"-v\d+(:\d+)?$")


def is_legacy_invoke_model(model_id: str) -> bool:
    return canonical_claude(model_id) in LEGACY_INVOKE_MODELS or bool(_ARN_VERSION.search(model_id))


def endpoint_of(value: str | None) -> str:
    endpoint = (value or "invoke").strip().lower()
    if endpoint not in ENDPOINTS:
        raise ValueError(f"endpoint={value!r}: use {' or '.join(ENDPOINTS)}")
    return endpoint


def body_version(model_id: str, option: str | None) -> str | None:
    """The `anthropic_version` to put in an invoke body; None leaves the SDK's own in place."""
    if option is not None:
        return None if option == SDK_VERSION else option
    return LEGACY_VERSION if is_legacy_invoke_model(model_id) else None


def default_version_option(model_id: str) -> str:
    """What an unset `bedrock_anthropic_version` means for this model, as an option value."""
    return LEGACY_VERSION if is_legacy_invoke_model(model_id) else SDK_VERSION


def resolve_spec(parsed: ModelSpec) -> str:
    """The spec's spelling with the Bedrock version choice written out; any other spec's
    spelling unchanged (a program's own kinds, which no provider parses, never come here)."""
    spec = parsed.text
    if parsed.provider != "bedrock" or parsed.option(VERSION_OPTION) is not None:
        return spec
    try:
        endpoint = endpoint_of(parsed.option("endpoint"))
    except ValueError as exc:
        raise SpecError(f"model spec {spec!r}: {exc}") from None
    if endpoint != "invoke":
        return spec
    joiner = "&" if "?" in spec else "?"
    return f"{spec}{joiner}{VERSION_OPTION}={default_version_option(parsed.model)}"
