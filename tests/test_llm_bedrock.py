"""Claude on Bedrock through the real SDK against the fake server answering as Bedrock does.

The fake validates invoke bodies the way Bedrock does: no `model` key, an `anthropic_version`,
and for the ARN-versioned (legacy) models only `bedrock-2023-05-31`; its 429s carry
`x-amzn-ErrorType: ThrottlingException` / `ModelNotReadyException` and no `retry-after`.
"""

from __future__ import annotations

import logging
import sys

import anthropic
import pytest

from llm_cache.backends import backend_for
from llm_cache.backends.bedrock import LEGACY_VERSION, resolve_spec
from llm_cache.client import CachedLLM
from llm_cache.errors import LLMFatalError, SpecError
from llm_cache.records import Message, Request, Role
from llm_cache.retry import RetryPolicy
from llm_cache.spec import parse_spec
from llm_cache.store import CacheStore
from llm_cache.testing.fake_server import FakeAnthropicServer, Fault

HAIKU_ID = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
HAIKU = "claude-haiku-4-5-20251001"
NO_WAIT = RetryPolicy(max_retries=3, base_delay=0.0, rate_limit_base_delay=0.0)


def ask(model: str = HAIKU, question: str = "q") -> Request:
    return Request(role=Role.TARGET, model=model, system="Be brief.",
                   messages=(Message.user(question),), max_tokens=32)


def run(tmp_path, spec: str, fake: FakeAnthropicServer, *, base: str = "", question: str = "q"):
    backend = backend_for(spec, api_key="aws-key", base_url=fake.url + base)
    with CachedLLM.open(tmp_path / "c", backends={Role.TARGET: backend},
                        retry_policy=NO_WAIT) as llm:
        return llm.complete([ask(HAIKU, question)]), llm.retries


@pytest.mark.parametrize("model_id", [
    HAIKU_ID, "global.anthropic.claude-sonnet-4-6", "anthropic.claude-opus-4-6-v1",
    "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "eu.anthropic.claude-opus-4-5-20251101-v1:0",
])
def test_legacy_models_get_the_bedrock_version_by_default(tmp_path, model_id):
    with FakeAnthropicServer() as fake:
        (response,), _ = run(tmp_path, f"bedrock:{model_id}?region=us-east-1", fake)
    (seen,) = fake.requests
    assert seen.path == f"/model/{model_id}/invoke"
    assert seen.body["anthropic_version"] == LEGACY_VERSION and "model" not in seen.body
    assert response.text == "echo: q"


def test_the_sdk_default_version_is_refused_by_bedrock_for_a_legacy_model(tmp_path):
    """The bug this default fixes: SDK 2.x's own version is a 400 ValidationException."""
    with FakeAnthropicServer() as fake:
        with pytest.raises(LLMFatalError, match="ValidationException.*anthropic_version") as info:
            run(tmp_path, f"bedrock:{HAIKU_ID}?region=us-east-1&bedrock_anthropic_version=sdk",
                fake)
        (seen,) = fake.requests
    assert seen.body["anthropic_version"] == anthropic._constants.ANTHROPIC_API_VERSION
    assert "not retried" in str(info.value) and "\n" not in str(info.value)
    assert len(CacheStore(tmp_path / "c")) == 0


def test_newer_models_on_the_invoke_path_keep_the_sdk_version_and_the_override_wins(tmp_path):
    with FakeAnthropicServer() as fake:
        run(tmp_path, "bedrock:anthropic.claude-opus-4-8?region=us-east-1", fake)
        run(tmp_path, "bedrock:anthropic.claude-opus-4-8?region=us-east-1"
                      "&bedrock_anthropic_version=bedrock-2023-05-31", fake, question="q2")
        sdk_default, overridden = fake.requests
    assert sdk_default.body["anthropic_version"] == anthropic._constants.ANTHROPIC_API_VERSION
    assert overridden.body["anthropic_version"] == LEGACY_VERSION


def test_mantle_endpoint_speaks_the_messages_api(tmp_path):
    if not hasattr(anthropic, "AsyncAnthropicBedrockMantle"):
        pytest.skip("this anthropic SDK has no AnthropicBedrockMantle")
    spec = "bedrock:anthropic.claude-opus-4-8?region=us-east-1&endpoint=mantle"
    with FakeAnthropicServer() as fake:
        (response,), _ = run(tmp_path, spec, fake, base="/anthropic")
    (seen,) = fake.requests
    assert seen.path == "/anthropic/v1/messages"
    assert seen.body["model"] == "anthropic.claude-opus-4-8"
    assert "anthropic_version" not in seen.body and seen.headers["anthropic-version"]
    assert seen.headers["authorization"] == "Bearer aws-key"
    assert response.text == "echo: q"
    with pytest.raises(SpecError, match="endpoint=invoke only"):
        backend_for(spec + "&bedrock_anthropic_version=bedrock-2023-05-31")
    with pytest.raises(SpecError, match="invoke or mantle"):
        backend_for("bedrock:anthropic.claude-opus-4-8?endpoint=converse")


def test_the_manifest_spec_records_the_version_choice():
    assert resolve_spec(parse_spec(f"bedrock:{HAIKU_ID}?region=us-east-1")) == (
        f"bedrock:{HAIKU_ID}?region=us-east-1&bedrock_anthropic_version={LEGACY_VERSION}")
    assert resolve_spec(parse_spec("bedrock:anthropic.claude-opus-4-8")) == (
        "bedrock:anthropic.claude-opus-4-8?bedrock_anthropic_version=sdk")
    for unchanged in ("bedrock:anthropic.claude-opus-4-8?endpoint=mantle",
                      f"bedrock:{HAIKU_ID}?bedrock_anthropic_version=2026-10-21",
                      "anthropic:claude-haiku-4-5", "openai:m@http://h:1/v1"):
        assert resolve_spec(parse_spec(unchanged)) == unchanged
    # The written-out spec builds the same backend as the one the user typed.
    for spec in (f"bedrock:{HAIKU_ID}", "bedrock:anthropic.claude-opus-4-8"):
        typed = backend_for(spec, api_key="k").anthropic_version
        assert backend_for(resolve_spec(parse_spec(spec)), api_key="k").anthropic_version == typed


def test_manifest_of_a_bedrock_run_names_the_version(tmp_path):
    from replay.run.options import RunOptions, build_config, new_manifest
    from replay.rundir.serde import TaskSpec

    options = RunOptions(task=TaskSpec(spec="demo"), target=f"bedrock:{HAIKU_ID}?region=eu-west-1",
                         optimizer="anthropic:claude-sonnet-4-6")
    manifest = new_manifest(options, build_config(options))
    assert manifest.target.endswith(f"&bedrock_anthropic_version={LEGACY_VERSION}")
    assert manifest.optimizer == "anthropic:claude-sonnet-4-6"


@pytest.mark.parametrize("fault", [Fault.BEDROCK_THROTTLING, Fault.BEDROCK_NOT_READY])
def test_bedrock_429s_are_retried_not_taken_for_a_spend_cap(tmp_path, fault, caplog):
    with FakeAnthropicServer(faults=[fault, fault]) as fake, caplog.at_level(logging.WARNING):
        (response,), retries = run(tmp_path, f"bedrock:{HAIKU_ID}?region=us-east-1", fake)
    assert response.text == "echo: q" and retries == 2 and len(fake.requests) == 3
    name = fault.value.removeprefix("429-bedrock-")
    lines = [r.getMessage() for r in caplog.records if r.name == "llm_cache.retry"]
    assert len(lines) == 2 and all("HTTP 429" in line for line in lines)
    assert {"throttling": "ThrottlingException", "model-not-ready": "ModelNotReadyException"}[
        name] in lines[0]


def test_throttles_without_retry_after_back_off_with_jitter(tmp_path):
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    with FakeAnthropicServer(faults=[Fault.BEDROCK_THROTTLING] * 3) as fake:
        backend = backend_for(f"bedrock:{HAIKU_ID}?region=us-east-1", api_key="k",
                              base_url=fake.url)
        llm = CachedLLM(CacheStore(tmp_path / "c"), {Role.TARGET: backend}, sleep=sleep,
                        retry_policy=RetryPolicy(max_retries=6), seed=1)
        with llm:
            llm.complete([ask(HAIKU)])
    assert len(waits) == 3
    for attempt, wait in enumerate(waits):  # 2 s doubling, jitter in [0.75, 1]
        assert 0.75 * 2 * 2**attempt <= wait <= 2 * 2**attempt


def test_sigv4_without_the_bedrock_extra_says_which_extra(tmp_path, monkeypatch):
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    monkeypatch.delenv("ANTHROPIC_AWS_API_KEY", raising=False)
    for module in ("boto3", "botocore"):
        monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    with FakeAnthropicServer() as fake:
        for endpoint in ("invoke", "mantle"):
            backend = backend_for(f"bedrock:{HAIKU_ID}?region=us-east-1&endpoint={endpoint}",
                                  base_url=fake.url)
            with CachedLLM.open(tmp_path / endpoint, backends={Role.TARGET: backend}) as llm, \
                    pytest.raises(LLMFatalError, match=r"pip install 'stratune\[bedrock\]'"):
                llm.complete([ask(HAIKU)])
        assert fake.requests == ()
    # With a Bedrock API key the extra is not needed.
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "token")
    with FakeAnthropicServer() as fake:
        backend = backend_for(f"bedrock:{HAIKU_ID}?region=us-east-1", base_url=fake.url)
        with CachedLLM.open(tmp_path / "key", backends={Role.TARGET: backend}) as llm:
            assert llm.complete([ask(HAIKU)])[0].text == "echo: q"
        assert fake.requests[0].headers["authorization"] == "Bearer token"
