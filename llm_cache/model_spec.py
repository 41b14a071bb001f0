"""The parsed model spec and what every provider's spelling shares: canonical model ids (the
id that enters `Request.model` and so the cache key), sampling defaults, the options that only
say how a model is reached (`TRANSPORT_OPTIONS`), and the base-URL check."""

from __future__ import annotations

import math
import re
from pathlib import PurePath
from urllib.parse import urlsplit

import attrs

from llm_cache.errors import SpecError
from llm_cache.prices import default_prices

Options = tuple[tuple[str, str], ...]
LLAMACPP_MODES = ("reset", "snapshot")
_REGION_PREFIX = re.compile(r"^(global|us|eu|jp|apac|au|ca)\.")
_VERSION_SUFFIX = re.compile(r"-v\d+(:\d+)?$")


@attrs.frozen(kw_only=True)
class ModelSpec:
    provider: str
    model: str  # what is sent to the provider (or the GGUF path)
    canonical: str  # what goes into Request.model and the cache key
    options: tuple[tuple[str, str], ...] = ()
    # the spelling it was parsed from: error messages name it, the manifest records it
    text: str = ""

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
