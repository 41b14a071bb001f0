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

import importlib
import math
import re
from collections.abc import Callable, Mapping
from pathlib import PurePath
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import attrs

from llm_cache.errors import SpecError
from llm_cache.prices import default_prices

LLAMACPP_MODES = ("reset", "snapshot")
_REGION_PREFIX = re.compile(r"^(global|us|eu|jp|apac|au|ca)\.")
_VERSION_SUFFIX = re.compile(r"-v\d+(:\d+)?$")


@attrs.frozen(kw_only=True)
class ModelSpec:
    provider: str
    model: str  # what is sent to the provider (or the GGUF path)
    canonical: str  # what goes into Request.model and the cache key
    options: tuple[tuple[str, str], ...] = ()

    def option(self, name: str, default: str | None = None) -> str | None:
        return dict(self.options).get(name, default)


# Options that change how a model is reached, never what it answers: a run may be resumed
# with other values (e.g. switched to the Batch API, or given a longer timeout).
TRANSPORT_OPTIONS = frozenset({
    "timeout", "connect_timeout", "concurrency", "max_retries", "prompt_caching", "api_key",
    "auth_header", "base_url", "region", "aws_region", "endpoint", "bedrock_anthropic_version",
    "batch", "batch_min", "batch_poll", "batch_poll_max", "batch_resubmits", "threads", "http",
})


def without_transport(spec: str) -> str:
    """The spec with its transport options dropped: what identifies the model of a run."""
    head, sep, query = spec.partition("?")
    if not sep:
        return spec
    kept = [part for part in query.split("&") if part.partition("=")[0] not in TRANSPORT_OPTIONS]
    return head + ("?" + "&".join(kept) if kept else "")


def flag(name: str, value: object) -> bool:
    """An on/off spec option (`?prompt_caching=off`, `?batch=on`)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "on", "yes"):
        return True
    if text in ("0", "false", "off", "no"):
        return False
    raise ValueError(f"{name}={value!r}: use on or off")


def canonical_claude(model: str) -> str:
    """One id per Claude model across the API, Bedrock and Vertex spellings."""
    name = _REGION_PREFIX.sub("", model)
    name = name.removeprefix("anthropic.")
    name = _VERSION_SUFFIX.sub("", name)
    name = name.replace("@", "-")
    return default_prices().resolve(name)


# OpenAI-compatible servers sample at their own default temperature (llama-cpp-python's: 0.8)
# unless told otherwise, so requests go out at temperature 0 with a fixed seed; both are part of
# the canonical id, and so of the cache key. `?seed=none` leaves the seed out for a server that
# refuses the field.
OPENAI_SAMPLING = (("temperature", "0"), ("seed", "0"))


def openai_sampling(options: dict[str, str]) -> tuple[float, int | None]:
    """(temperature, seed or None) of an openai spec's options, defaults filled in."""
    found = {**dict(OPENAI_SAMPLING), **options}
    try:
        temperature = float(found["temperature"])
        seed = None if found["seed"].lower() == "none" else int(found["seed"])
    except ValueError:
        raise SpecError(f"temperature={found['temperature']!r}, seed={found['seed']!r}: use a "
                        "number >= 0 and an integer (or seed=none)") from None
    if not (math.isfinite(temperature) and 0 <= temperature <= MAX_TEMPERATURE):
        raise SpecError(f"temperature={found['temperature']!r}: use a number from 0 to "
                        f"{MAX_TEMPERATURE:g}")
    return temperature, seed


def canonical_openai(model: str, options: dict[str, str]) -> str:
    temperature, seed = openai_sampling(options)
    return f"{model}?temperature={temperature:g}" + ("" if seed is None else f"&seed={seed}")


def canonical_gguf(path: str, mode: str) -> str:
    return f"gguf:{PurePath(path).stem.lower()}@{mode}"


MAX_TEMPERATURE = 2.0  # the OpenAI API's range; servers answer above it with HTTP 400

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
SECONDS = ("timeout", "connect_timeout", "batch_poll", "batch_poll_max")
MAX_SECONDS = 7 * 24 * 3600.0
# Options that must not be empty (`?api_key=` would send no key and fail as a connection error).
NOT_EMPTY = ("api_key", "auth_header", "region", "aws_region", "endpoint",
             "bedrock_anthropic_version", "mode", "temperature", "prompt_caching", "batch", "http")
_BATCH = ("batch", "batch_min", "batch_poll", "batch_poll_max", "batch_resubmits")
# The options each provider takes (`max_retries`, every provider's, sets its calls' retries).
PROVIDER_OPTIONS: Mapping[str, frozenset[str]] = {
    "anthropic": frozenset({"api_key", "base_url", "timeout", "connect_timeout", "concurrency", "auth_header",
                            "prompt_caching", "max_retries", "http", *_BATCH}),
    "bedrock": frozenset({"api_key", "base_url", "region", "aws_region", "timeout", "connect_timeout",
                          "concurrency", "bedrock_anthropic_version", "endpoint",
                          "prompt_caching", "max_retries", "http", *_BATCH}),
    "openai": frozenset({"api_key", "timeout", "connect_timeout", "concurrency", "temperature",
                         "seed", "n_ctx", "max_retries"}),
    "llamacpp": frozenset({"threads", "mode", "n_ctx", "seed", "max_retries"}),
}


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


Options = tuple[tuple[str, str], ...]


def _claude(spec: str, provider: str, body: str, options: Options) -> ModelSpec:
    return ModelSpec(provider=provider, model=body, canonical=canonical_claude(body),
                     options=options)


def _openai(spec: str, provider: str, body: str, options: Options) -> ModelSpec:
    model, at, base_url = body.partition("@")
    if not at or not model or not base_url.startswith(("http://", "https://")):
        raise SpecError(f"model spec {spec!r}: write openai:<model>@<http(s) base_url>")
    check_base_url(spec, base_url)
    try:
        canonical = canonical_openai(model, dict(options))
    except SpecError as error:
        raise SpecError(f"model spec {spec!r}: {error}") from None
    return ModelSpec(provider=provider, model=model, canonical=canonical,
                     options=(("base_url", base_url), *options))


def _llamacpp(spec: str, provider: str, body: str, options: Options) -> ModelSpec:
    mode = dict(options).get("mode", "reset")
    if mode not in LLAMACPP_MODES:
        raise SpecError(f"model spec {spec!r}: mode must be one of {', '.join(LLAMACPP_MODES)}")
    return ModelSpec(provider=provider, model=body, canonical=canonical_gguf(body, mode),
                     options=options)


@attrs.frozen(kw_only=True)
class Provider:
    """A model spec family: its form (for errors and help), how its body parses into the model
    to send and the canonical id, and its backend class (`module:Class`, imported only when
    built, so a provider's SDK loads only when it is used)."""

    form: str
    parse: Callable[[str, str, str, Options], ModelSpec]
    backend: str

    def backend_class(self) -> Any:
        module, _, name = self.backend.partition(":")
        return getattr(importlib.import_module(module), name)


_ANTHROPIC = "llm_cache.backends.anthropic_backend:AnthropicBackend"
# The one table of providers: a new backend is a module and a row here.
PROVIDERS: Mapping[str, Provider] = {
    "anthropic": Provider(form="anthropic:<model>", parse=_claude, backend=_ANTHROPIC),
    "bedrock": Provider(form="bedrock:<id>", parse=_claude, backend=_ANTHROPIC),
    "openai": Provider(form="openai:<model>@<base_url>", parse=_openai,
                       backend="llm_cache.backends.openai_compat:OpenAICompatBackend"),
    "llamacpp": Provider(form="llamacpp:<gguf path>", parse=_llamacpp,
                         backend="llm_cache.backends.llamacpp:LlamaCppBackend"),
}
_FORMS = (" | ".join(p.form for p in PROVIDERS.values())
          + " (options after '?', e.g. ?threads=2&mode=reset)")


def check_base_url(spec: str, url: str) -> None:
    """A base URL with a host and a valid port: anything else fails every call after a
    round of retries."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise SpecError(f"model spec {spec!r}: base URL {url!r} is malformed ({exc}); write "
                        "http(s)://host[:port]/path") from None
    if not parts.hostname or any(c.isspace() for c in url) or (port is not None and port < 1):
        raise SpecError(f"model spec {spec!r}: base URL {url!r} has no valid host; write "
                        "http(s)://host[:port]/path")


def _check_names(spec: str, provider: str, body: str, options: Options) -> None:
    """No space around the spec or inside a model name (it would be sent as part of the name
    and answered with a 404 after retries); only options the provider takes."""
    if spec != spec.strip() or provider != provider.strip():
        raise SpecError(f"model spec {spec!r}: remove the spaces around it")
    model = body.partition("@")[0] if provider == "openai" else body
    if model != model.strip() or (provider != "llamacpp" and any(c.isspace() for c in model)):
        raise SpecError(f"model spec {spec!r}: the model name {model!r} holds a space; "
                        "remove it")
    known = PROVIDER_OPTIONS.get(provider)
    for name, _ in options:
        if known is not None and name not in known:
            raise SpecError(f"model spec {spec!r}: {provider} models take no option {name!r}; "
                            f"use {', '.join(sorted(known))}")


def parse_spec(spec: str) -> ModelSpec:
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
    return PROVIDERS[provider].parse(spec, provider, body, options)
