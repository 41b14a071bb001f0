"""The providers: one `Provider` row per backend family, the one table every reader consults (the
spec parser, backend construction, the options each takes, the credentials it reads, the
endpoint a grid limits, the check made before a run starts). A new backend is a module of
`llm_cache/backends/` and a row here."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from llm_cache.errors import SpecError
from llm_cache.model_spec import (
    LLAMACPP_MODES,
    ModelSpec,
    Options,
    canonical_claude,
    canonical_gguf,
    canonical_openai,
    check_base_url,
)

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


def _claude(spec: str, provider: str, body: str, options: Options) -> ModelSpec:
    base_url = dict(options).get("base_url")
    if base_url is not None:  # a proxy or a gateway: a file: or a typo fails each call late
        if not base_url.startswith(("http://", "https://")):
            raise SpecError(f"model spec {spec!r}: base_url={base_url!r}: give an http(s) URL")
        check_base_url(spec, base_url)
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
class Credentials:
    """What a provider reads from the environment: one of `any_of` must be set (empty: it may
    run without), `also` travel along when set (a grid's cells on Ray get them too)."""

    any_of: tuple[str, ...] = ()
    also: tuple[str, ...] = ()


def _load(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


@attrs.frozen(kw_only=True)
class Provider:
    """A model spec family: its form (for errors and help), how its body parses into the model
    to send and the canonical id, its backend class and its check before a run (`module:name`,
    imported only when used, so a provider's SDK loads only then), the options its specs take,
    the credentials it reads, and the endpoint a grid's `max_connections` limits."""

    form: str
    parse: Callable[[str, str, str, Options], ModelSpec]
    backend: str
    options: frozenset[str]
    credentials: Credentials = Credentials()
    endpoint: Callable[[ModelSpec], str] = lambda parsed: parsed.provider
    check: str | None = None  # `module:function(parsed, public spec)`, raising SpecError
    # the model name inside a spec's body (checked for spaces before anything is sent), and
    # whether a name may hold spaces (a file path may)
    model_name: Callable[[str], str] = lambda body: body
    spaced_names: bool = False

    def backend_class(self) -> Any:
        return _load(self.backend)

    def check_access(self, parsed: ModelSpec, public: str) -> None:
        """Whether the model can be reached at all, before anything is written or paid."""
        if self.check is not None:
            _load(self.check)(parsed, public)


_ANTHROPIC = "llm_cache.backends.anthropic_backend:AnthropicBackend"
_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
# Bedrock's credentials may come from a node's instance role and ollama/vLLM need no key, so
# only the Anthropic API's key is required; the others travel when set.
_AWS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK", "AWS_REGION", "AWS_DEFAULT_REGION")
# The one table of providers: a new backend is a module and a row here.
PROVIDERS: Mapping[str, Provider] = {
    "anthropic": Provider(form="anthropic:<model>", parse=_claude, backend=_ANTHROPIC,
                          options=PROVIDER_OPTIONS["anthropic"],
                          credentials=Credentials(any_of=_KEYS, also=("ANTHROPIC_BASE_URL",)),
                          check="llm_cache.access:check_anthropic"),
    "bedrock": Provider(form="bedrock:<id>", parse=_claude, backend=_ANTHROPIC,
                        options=PROVIDER_OPTIONS["bedrock"], credentials=Credentials(also=_AWS),
                        check="llm_cache.access:check_bedrock"),
    "openai": Provider(form="openai:<model>@<base_url>", parse=_openai,
                       backend="llm_cache.backends.openai_compat:OpenAICompatBackend",
                       options=PROVIDER_OPTIONS["openai"],
                       credentials=Credentials(also=("OPENAI_API_KEY",)),
                       endpoint=lambda parsed: f"openai:{parsed.option('base_url')}",
                       model_name=lambda body: body.partition("@")[0],
                       check="llm_cache.access:check_reachable"),
    "llamacpp": Provider(form="llamacpp:<gguf path>", parse=_llamacpp,
                         backend="llm_cache.backends.llamacpp:LlamaCppBackend",
                         options=PROVIDER_OPTIONS["llamacpp"], spaced_names=True),
}
_FORMS = (" | ".join(p.form for p in PROVIDERS.values())
          + " (options after '?', e.g. ?threads=2&mode=reset)")
