"""Claude through the official SDK: the Anthropic API, or Bedrock (invoke path or Mantle).

SDK retries are off (`max_retries=0`): the client's retry layer is the only one. Request
mapping lives in `anthropic_params`, failure classification in `anthropic_errors`, the Bedrock
endpoint and version policy in `bedrock`.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import ssl
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from llm_cache.backends import anthropic_batch, bedrock
from llm_cache.backends.anthropic_errors import classify_anthropic, classify_batch_error
from llm_cache.backends.anthropic_params import (
    CONNECT_TIMEOUT,
    NO_CACHING,
    build_params,
    read_timeout_for,
    response_of_body,
)
from llm_cache.backends.base import BackendBase, refuse_blank_text
from llm_cache.batch_records import BatchOptions, BatchStatus, ItemResult
from llm_cache.errors import LLMFatalError
from llm_cache.model_spec import ModelSpec, flag
from llm_cache.prices import PriceTable, default_prices
from llm_cache.records import Request, Response
from llm_cache.retry import RetryDecision

__all__ = ["AnthropicBackend", "build_params", "classify_anthropic"]

AUTH_HEADERS = ("bearer", "x-api-key")
HTTP_LIBRARIES = ("aiohttp", "httpx")
STATUS_TIMEOUT = 60.0  # a batch status is a small JSON object; a stalled poll is retried
API_HOST = "api.anthropic.com"
# Environment variables that make the SDK use a Bedrock API key instead of SigV4 signing.
BEDROCK_KEY_ENV = {"invoke": ("AWS_BEARER_TOKEN_BEDROCK",),
                   "mantle": ("AWS_BEARER_TOKEN_BEDROCK", "ANTHROPIC_AWS_API_KEY")}


def _importable(name: str) -> bool:
    """Installed, without importing it (a backend that never calls must stay cheap to build);
    a None in `sys.modules` blocks an import, so it counts as missing."""
    if name in sys.modules:
        return sys.modules[name] is not None
    return importlib.util.find_spec(name) is not None


@functools.cache
def shared_ssl_context() -> ssl.SSLContext | None:
    """One TLS context, as the SDK's HTTP library builds it (CA bundle, SSL_CERT_FILE and
    SSL_CERT_DIR), for every client of the process. Each client would otherwise load the CA
    bundle again (about 15 ms of CPU): two clients per run, so in a grid of many short cells a
    visible share of its CPU. A context is safe to share between threads and event loops. None
    when the SDK no longer uses that library: its clients then build their own."""
    try:
        import httpx2
    except ImportError:
        return None
    return httpx2.create_ssl_context()


class AnthropicBackend(BackendBase):
    """One model on the Anthropic API or on Bedrock; clients are built lazily in the loop."""

    def __init__(
        self,
        model: str,
        *,
        provider: str = "anthropic",
        api_key: str | None = None,
        base_url: str | None = None,
        aws_region: str | None = None,
        timeout: float | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        concurrency: int | None = None,
        canonical: str | None = None,
        bedrock_anthropic_version: str | None = None,
        endpoint: str | None = None,
        auth_header: str = "bearer",
        prices: PriceTable | None = None,
        prompt_caching: bool = True,
        batch: BatchOptions | None = None,
        http: str | None = None,
    ) -> None:
        if provider not in ("anthropic", "bedrock"):
            raise ValueError(f"provider must be 'anthropic' or 'bedrock', got {provider!r}")
        if auth_header not in AUTH_HEADERS:
            raise ValueError(f"auth_header={auth_header!r}: use {' or '.join(AUTH_HEADERS)}")
        if http not in (None, *HTTP_LIBRARIES):
            raise ValueError(f"http={http!r}: use {' or '.join(HTTP_LIBRARIES)}")
        if provider == "anthropic" and (endpoint or bedrock_anthropic_version):
            raise ValueError("endpoint and bedrock_anthropic_version apply to bedrock: specs only")
        if provider == "bedrock" and auth_header != "bearer":
            raise ValueError("auth_header applies to anthropic: specs only")
        if provider == "bedrock" and batch is not None:
            raise ValueError(anthropic_batch.BEDROCK_REFUSAL)
        self.model = model
        self.provider = provider
        self.endpoint = bedrock.endpoint_of(endpoint) if provider == "bedrock" else "api"
        if self.endpoint == "mantle" and bedrock_anthropic_version is not None:
            raise ValueError("bedrock_anthropic_version applies to endpoint=invoke only (Mantle "
                             "takes the version as a header, like the Claude API)")
        self.name = f"{provider}:{model}"
        self.concurrency = concurrency
        self.batch = batch  # None: every call live; else waves of batch.min_size go as batches
        self._api_key = api_key
        self._base_url = base_url
        self._aws_region = aws_region
        self._timeout = timeout  # None: scaled to each request's max_tokens
        self._connect_timeout = connect_timeout
        self._auth_header = auth_header
        has_aiohttp = _importable("aiohttp")
        self.http = http or ("aiohttp" if has_aiohttp else "httpx")
        if self.http == "aiohttp" and not has_aiohttp:
            raise ValueError("http=aiohttp needs aiohttp: pip install 'anthropic[aiohttp]' (or "
                             "write http=httpx)")
        prices = prices or default_prices()
        # prompt_caching=False never marks the skill: for endpoints that reject cache_control.
        self.cache_min_tokens = (prices.cache_min_tokens(canonical or model) if prompt_caching
                                 else NO_CACHING)
        version = (bedrock.body_version(model, bedrock_anthropic_version)
                   if self.endpoint == "invoke" else None)
        self.anthropic_version = version  # None: the SDK's own
        self._extra_body = {"anthropic_version": version} if version else {}
        self._client: Any = None

    @classmethod
    def from_spec(cls, spec: ModelSpec, **options: Any) -> AnthropicBackend:
        region = options.pop("region", None) or options.pop("aws_region", None)
        options["batch"] = BatchOptions.take(options)
        for name in ("timeout", "connect_timeout"):
            if name in options:
                options[name] = float(options[name])
        if "concurrency" in options:
            options["concurrency"] = int(options["concurrency"])
        if "prompt_caching" in options:
            options["prompt_caching"] = flag("prompt_caching", options["prompt_caching"])
        return cls(spec.model, provider=spec.provider, aws_region=region,
                   canonical=spec.canonical, **options)

    # ---- client --------------------------------------------------------------------------

    def _timeout_for(self, request: Request) -> Any:
        import anthropic

        read = self._timeout if self._timeout is not None else read_timeout_for(
            request.max_tokens)
        return anthropic.Timeout(read, connect=min(self._connect_timeout, read))

    def _require_signing_extra(self) -> None:
        """SigV4 (no Bedrock API key) needs boto3/botocore, which only the extra installs."""
        if self._api_key is not None or any(os.environ.get(v) for v in BEDROCK_KEY_ENV[
                self.endpoint]):
            return
        missing = [m for m in ("boto3", "botocore") if not _importable(m)]
        if missing:
            raise LLMFatalError(
                f"{self.name}: AWS SigV4 credentials need {' and '.join(missing)}, which are "
                "not installed: pip install 'stratune[bedrock]' (or set AWS_BEARER_TOKEN_BEDROCK "
                "to a Bedrock API key)"
            )

    def _make_client(self) -> Any:
        import anthropic

        common: dict[str, Any] = {"max_retries": 0,
                                  "timeout": anthropic.Timeout(600.0, connect=self._connect_timeout)}
        # The SDK's own HTTP client with its defaults, on one TLS context for the process. Its
        # aiohttp transport by default: the httpx pool checks every pooled connection's expiry
        # as each request starts and ends, which at 30-60 connections per client (one wave of
        # a run) was about half of the transport's CPU.
        http_client = (anthropic.DefaultAioHttpClient if self.http == "aiohttp"
                       else anthropic.DefaultAsyncHttpxClient)
        if (context := shared_ssl_context()) is not None:
            common["http_client"] = http_client(verify=context)
        elif self.http == "aiohttp":
            common["http_client"] = http_client()
        if self._base_url is not None:
            common["base_url"] = self._base_url
        if self.provider == "bedrock":
            self._require_signing_extra()
            if self.endpoint == "mantle":
                mantle = getattr(anthropic, "AsyncAnthropicBedrockMantle", None)
                if mantle is None:
                    raise LLMFatalError(
                        f"{self.name}: endpoint=mantle needs an anthropic SDK with "
                        f"AnthropicBedrockMantle (installed: {anthropic.__version__}); "
                        "pip install -U 'anthropic>=2'"
                    )
                return mantle(aws_region=self._aws_region, api_key=self._api_key, **common)
            return anthropic.AsyncAnthropicBedrock(aws_region=self._aws_region,
                                                   api_key=self._api_key, **common)
        if self._auth_header == "x-api-key":
            key = self._api_key or os.environ.get("ANTHROPIC_API_KEY")
            if not key:
                raise LLMFatalError(f"{self.name}: auth_header=x-api-key needs a key: set "
                                    "ANTHROPIC_API_KEY or pass api_key=")
            # The key goes in x-api-key only; SDK 2.x would add 'Authorization: Bearer'.
            headers = {"x-api-key": key, "Authorization": anthropic.Omit()}
            return anthropic.AsyncAnthropic(api_key=key, default_headers=headers, **common)
        return anthropic.AsyncAnthropic(api_key=self._api_key, **common)

    # ---- Backend protocol ----------------------------------------------------------------

    def _sdk(self) -> Any:
        if self._client is None:
            self._client = self._make_client()
        return self._client

    async def acomplete(self, request: Request) -> Response:
        refuse_blank_text(request, self.name)
        params = build_params(request, send_model=self.model,
                              cache_min_tokens=self.cache_min_tokens, extra_body=self._extra_body)
        # The raw body, not the SDK's parsed `Message`: same request, same errors, less CPU.
        raw = await self._sdk().messages.with_raw_response.create(
            **params, timeout=self._timeout_for(request))
        return response_of_body(raw.http_response)

    # ---- BatchBackend protocol (llm_cache.batch) -----------------------------------------

    async def batch_create(self, items: Sequence[tuple[str, Request]]) -> str:
        for _, request in items:
            refuse_blank_text(request, self.name)
        params = [(custom_id, anthropic_batch.batch_params(
            request, send_model=self.model, cache_min_tokens=self.cache_min_tokens,
            extra_body=self._extra_body)) for custom_id, request in items]
        return await anthropic_batch.create(self._sdk(), params)

    async def batch_status(self, batch_id: str) -> BatchStatus:
        import anthropic

        batch = await self._sdk().messages.batches.retrieve(
            batch_id, timeout=anthropic.Timeout(STATUS_TIMEOUT, connect=self._connect_timeout))
        return anthropic_batch.to_status(batch)

    async def batch_results(self, batch_id: str) -> list[ItemResult]:
        return await anthropic_batch.results(self._sdk(), batch_id)

    def classify_item(self, error: Mapping[str, Any]) -> RetryDecision:
        return classify_batch_error(error, proxy=self._proxy(), auth_header=self._auth_header)

    def _proxy(self) -> str | None:
        if self.provider != "anthropic":
            return None
        url = (str(self._client.base_url) if self._client is not None
               else self._base_url or os.environ.get("ANTHROPIC_BASE_URL"))
        return url if url and API_HOST not in url else None

    def classify(self, exc: BaseException) -> RetryDecision:
        return classify_anthropic(exc, proxy=self._proxy(), auth_header=self._auth_header)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
