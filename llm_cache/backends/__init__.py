"""Backends: one module per provider, each importing its SDK lazily.

`backend_for(spec)` builds one from a parsed `ModelSpec`, or from a model spec string, which it
parses (see `llm_cache.spec`).
"""

from __future__ import annotations

from typing import Any

from llm_cache.backends.base import Backend
from llm_cache.errors import SpecError
from llm_cache.model_spec import ModelSpec
from llm_cache.providers import PROVIDERS
from llm_cache.spec import parse_spec

__all__ = ["Backend", "backend_for"]


def backend_for(spec: str | ModelSpec, **options: Any) -> Backend:
    """Build the backend a spec names; keyword options override those in the spec string. A
    string is parsed here, the edge of the model layer's own API (benchmarks, programs)."""
    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    merged: dict[str, Any] = {**dict(parsed.options), **options}
    retries = merged.pop("max_retries", None)  # the client's retry policy, for this backend
    try:
        backend = _build(parsed, merged)
        if retries is not None:
            backend.max_retries = int(retries)
        return backend
    except (TypeError, ValueError) as exc:
        raise SpecError(f"model spec {parsed.text!r}: bad option ({exc})") from exc


def _build(parsed: ModelSpec, options: dict[str, Any]) -> Backend:
    backend: Backend = PROVIDERS[parsed.provider].backend_class().from_spec(parsed, **options)
    return backend
