"""Cache keys: format, stability across processes, what is in and out, explain, spec parsing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from llm_cache.errors import SpecError
from llm_cache.key import (
    KEY_FIELDS,
    canonical_request,
    differing_fields,
    explain_key,
    key_document,
    request_key,
)
from llm_cache.records import CallKind, ImageBlock, Message, Request, Role, TextBlock
from llm_cache.spec import parse_spec

ROOT = Path(__file__).resolve().parents[1]


def make_request(**changes: object) -> Request:
    base = Request(
        role=Role.TARGET,
        model="claude-haiku-4-5-20251001",
        system="Answer in <answer> tags.",
        messages=(Message.user("What is 2+2?"),),
        max_tokens=64,
    )
    return attrs.evolve(base, **changes)


def test_key_is_32_lowercase_hex():
    key = request_key(make_request())
    assert len(key) == 32 and all(c in "0123456789abcdef" for c in key)


def test_key_is_pinned_so_schema_changes_are_deliberate():
    # If this fails, the canonical form changed: bump KEY_SCHEMA_VERSION on purpose.
    assert request_key(make_request()) == PINNED_KEY


def test_key_is_the_same_in_a_fresh_process():
    code = (
        "from tests.test_llm_key import make_request;"
        "from llm_cache.key import request_key;"
        "print(request_key(make_request()))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONHASHSEED": "123", "PATH": ""}, cwd=ROOT)
    assert out.stdout.strip() == request_key(make_request())


def test_kind_is_not_in_the_key_but_draw_is():
    base = make_request()
    assert request_key(base) == request_key(attrs.evolve(base, kind=CallKind.FEEDBACK_PREPARATION))
    assert request_key(base) != request_key(attrs.evolve(base, draw=1))


def test_temperature_zero_int_and_float_agree_and_differ_from_unset():
    assert request_key(make_request(temperature=0)) == request_key(make_request(temperature=0.0))
    assert request_key(make_request(temperature=0.0)) != request_key(make_request())


def test_string_content_and_single_text_block_are_the_same_request():
    as_text = make_request(messages=(Message.user("hi"),))
    as_blocks = make_request(messages=(Message(role="user", content=(TextBlock(text="hi"),)),))
    assert request_key(as_text) == request_key(as_blocks)


def test_images_enter_the_key_by_content_hash():
    img = ImageBlock(media_type="image/png", data="aGVsbG8=")
    other = ImageBlock(media_type="image/png", data="aGVsbG9v")
    a = make_request(messages=(Message(role="user", content=(TextBlock(text="q"), img)),))
    b = make_request(messages=(Message(role="user", content=(TextBlock(text="q"), other)),))
    assert request_key(a) != request_key(b)
    assert "aGVsbG8=" not in canonical_request(a)  # the stored doc stays small


def test_canonical_json_is_sorted_and_compact():
    text = canonical_request(make_request())
    assert ", " not in text and ": " not in text
    assert json.loads(text) == key_document(make_request())
    assert list(json.loads(text)) == sorted(json.loads(text))


def test_explain_lists_every_key_field_and_the_exclusions():
    text = explain_key(make_request(system="x" * 500))
    for name in KEY_FIELDS:
        assert f"\n{name}" in text
    assert request_key(make_request(system="x" * 500)) in text
    assert "not in key" in text and "cache_control" in text
    assert "500 chars" in text or "502 chars" in text


def test_differing_fields_names_the_changed_fields():
    a = key_document(make_request())
    b = key_document(make_request(system="other", max_tokens=9))
    assert differing_fields(a, b) == ("system", "max_tokens")


@pytest.mark.parametrize(
    ("spec", "provider", "model", "canonical"),
    [
        ("anthropic:claude-haiku-4-5", "anthropic", "claude-haiku-4-5",
         "claude-haiku-4-5-20251001"),
        ("bedrock:global.anthropic.claude-haiku-4-5-20251001-v1:0", "bedrock",
         "global.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5-20251001"),
        ("anthropic:claude-sonnet-4-6", "anthropic", "claude-sonnet-4-6", "claude-sonnet-4-6"),
        ("bedrock:anthropic.claude-sonnet-4-6", "bedrock", "anthropic.claude-sonnet-4-6",
         "claude-sonnet-4-6"),
        ("openai:qwen2.5:1.5b@http://gpu:8000/v1", "openai", "qwen2.5:1.5b",
         "qwen2.5:1.5b?temperature=0&seed=0"),
        ("openai:q@http://gpu:8000/v1?temperature=0.7&seed=none&timeout=9", "openai", "q",
         "q?temperature=0.7"),
        ("llamacpp:/m/SmolLM2-135M-Instruct.Q4_1.gguf?threads=2&mode=snapshot", "llamacpp",
         "/m/SmolLM2-135M-Instruct.Q4_1.gguf", "gguf:smollm2-135m-instruct.q4_1@snapshot"),
        ("llamacpp:models/smollm2-135m-instruct-q4_1.gguf", "llamacpp",
         "models/smollm2-135m-instruct-q4_1.gguf", "gguf:smollm2-135m-instruct-q4_1@reset"),
    ],
)
def test_parse_spec(spec, provider, model, canonical):
    parsed = parse_spec(spec)
    assert (parsed.provider, parsed.model, parsed.canonical) == (provider, model, canonical)


def test_spec_options_and_base_url():
    parsed = parse_spec("bedrock:anthropic.claude-opus-5?region=eu-west-1&timeout=30")
    assert parsed.option("region") == "eu-west-1" and parsed.option("timeout") == "30"
    assert parse_spec("openai:m@http://h:1/v1").option("base_url") == "http://h:1/v1"


@pytest.mark.parametrize(
    "spec",
    ["claude-haiku-4-5", "gpt:x", "anthropic:", "openai:model", "openai:m@ftp://x",
     "llamacpp:x.gguf?mode=fast", "anthropic:m?=&", "openai:m@http://h:1/v1?temperature=hot",
     "openai:m@http://h:1/v1?temperature=-1", "openai:m@http://h:1/v1?seed=1.5"],
)
def test_bad_specs_raise_one_line_errors(spec):
    with pytest.raises(SpecError) as info:
        parse_spec(spec)
    assert "\n" not in str(info.value) and spec.split("?")[0] in str(info.value)


PINNED_KEY = "c5d6d7ba27a70a36a6cd8af80ca6d8fd"


def test_unknown_backend_options_are_spec_errors():
    from llm_cache.backends import backend_for

    with pytest.raises(SpecError, match="take no option 'colour'"):
        backend_for("anthropic:claude-haiku-4-5?colour=blue")
    with pytest.raises(SpecError, match="threads='two' must be a whole number"):
        backend_for("llamacpp:x.gguf?threads=two")


def test_an_unknown_provider_is_one_line_listing_the_known_ones():
    from llm_cache.providers import PROVIDERS

    with pytest.raises(SpecError) as info:
        parse_spec("gemini:flash")
    message = str(info.value)
    assert "\n" not in message and "unknown provider 'gemini'" in message
    assert all(name in message for name in PROVIDERS)


def test_every_provider_builds_its_own_backend_class():
    from llm_cache.providers import PROVIDERS

    for provider in PROVIDERS.values():
        assert provider.form.split(":")[0] in PROVIDERS
        assert hasattr(provider.backend_class(), "from_spec")
