"""The agent loop against a local HTTP server speaking each provider's tool API: Anthropic's
`tool_use` / `tool_result` blocks through the real SDK (live and as Message Batches, one batch
per turn) and an OpenAI-compatible server's `tools` / `tool_calls`; the tools run through the
tool backend, every call cached."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from llm_cache.backends import backend_for
from llm_cache.client import CachedLLM
from llm_cache.records import Role
from llm_cache.testing.fake_server import FakeAnthropicServer
from replay.models import specs as models
from replay.rundir.serde import TaskSpec
from stratune_core.tasks.executions import run_jobs
from tests.support.openai_server import JsonServer

SPEC = TaskSpec(spec="stock", limit=4, tools=("replay.data.stock.tools:TOOLS",))
SKILL = "Call the tool with the code as written, SKU- included, then reply with its number."
CODE = re.compile(r"SKU-\d{4}")


def _question(messages: list[dict[str, Any]]) -> str:
    first = messages[0]["content"]
    return first if isinstance(first, str) else "".join(b.get("text", "") for b in first)


class AnthropicAgent:
    """Calls the question's tool once, then answers the tool's result."""

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        assert {t["name"] for t in body["tools"]} == {"stock", "price"}
        last = body["messages"][-1]["content"]
        results = [b for b in last if isinstance(b, dict) and b.get("type") == "tool_result"]
        usage = {"input_tokens": 20, "output_tokens": 5}
        base = {"type": "message", "role": "assistant", "model": body["model"],
                "stop_sequence": None, "usage": usage, "id": "msg"}
        if results:
            return {**base, "stop_reason": "end_turn",
                    "content": [{"type": "text", "text": results[0]["content"]}]}
        question = _question(body["messages"])
        tool = "price" if "price" in question or "cost" in question else "stock"
        return {**base, "stop_reason": "tool_use", "content": [
            {"type": "text", "text": "Looking it up."},
            {"type": "tool_use", "id": "toolu_01", "name": tool,
             "input": {"sku": CODE.search(question).group(0)}}]}


class OpenAIAgent(JsonServer):
    def __init__(self) -> None:
        super().__init__()
        self.bodies: list[dict[str, Any]] = []

    def get(self, path: str) -> tuple[int, dict]:
        return 404, {}

    def post(self, path: str, body: dict, headers: dict[str, str]) -> tuple[int, dict]:
        self.bodies.append(body)
        tools = [m for m in body["messages"] if m["role"] == "tool"]
        usage = {"prompt_tokens": 20, "completion_tokens": 5}
        if tools:
            message = {"role": "assistant", "content": tools[-1]["content"]}
            return 200, {"model": body["model"], "usage": usage, "choices": [
                {"message": message, "finish_reason": "stop"}]}
        question = _question([m for m in body["messages"] if m["role"] == "user"])
        tool = "price" if "price" in question or "cost" in question else "stock"
        call = {"id": "call_abc", "type": "function", "function": {
            "name": tool, "arguments": json.dumps({"sku": CODE.search(question).group(0)})}}
        return 200, {"model": body["model"], "usage": usage, "choices": [
            {"message": {"role": "assistant", "content": None, "tool_calls": [call]},
             "finish_reason": "tool_calls"}]}


def _episodes(cache: Path, target: Any, model: str) -> list[float]:
    task = models.load_task(SPEC)
    with CachedLLM.open(cache, backends={Role.TARGET: target, **models.kind_backends(SPEC)}) as llm:
        samples = task.split("test")
        calls = run_jobs(task, llm, model, [(SKILL, s) for s in samples])
        scores = [task.score(s, c.responses).value for s, c in zip(samples, calls, strict=True)]
        assert all(len(c.requests) == 3 for c in calls)  # the model, its tool, the model
    return scores


def test_anthropic_tool_use_blocks_through_the_sdk(tmp_path):
    with FakeAnthropicServer(responder=AnthropicAgent()) as fake:
        target = backend_for("anthropic:claude-haiku-4-5", api_key="k", base_url=fake.url)
        assert _episodes(tmp_path / "c", target, "claude-haiku-4-5") == [1.0] * 4
        second = [r.body for r in fake.requests if any(
            b.get("type") == "tool_result" for m in r.body["messages"]
            if isinstance(m["content"], list) for b in m["content"])]
        turn = second[0]["messages"]
        assert [m["role"] for m in turn] == ["user", "assistant", "user"]
        assert turn[1]["content"][1]["type"] == "tool_use"
        assert turn[2]["content"][0]["tool_use_id"] == "toolu_01"
        before = len(fake.requests)
        target = backend_for("anthropic:claude-haiku-4-5", api_key="k", base_url=fake.url)
        assert _episodes(tmp_path / "c", target, "claude-haiku-4-5") == [1.0] * 4
        assert len(fake.requests) == before  # every call, model and tool, from the cache


@pytest.mark.slow
def test_message_batches_send_each_turn_as_its_own_batch(tmp_path):
    with FakeAnthropicServer(responder=AnthropicAgent(), batch_delay=0.05) as fake:
        target = backend_for("anthropic:claude-haiku-4-5?batch=on&batch_min=1&batch_poll=0.05",
                             api_key="k", base_url=fake.url)
        assert _episodes(tmp_path / "c", target, "claude-haiku-4-5") == [1.0] * 4
        batches = list(fake.batches.batches.values())
        assert len(batches) == 2 and all(len(b.requests) == 4 for b in batches)
        second = batches[1].requests[0]["params"]
        assert second["messages"][1]["content"][1]["type"] == "tool_use"


def test_openai_tools_and_tool_calls(tmp_path):
    server = OpenAIAgent()
    try:
        target = backend_for(f"openai:qwen@{server.url}")
        assert _episodes(tmp_path / "c", target, models.canonical_model(
            f"openai:qwen@{server.url}")) == [1.0] * 4
    finally:
        server.close()
    first, second = server.bodies[0], next(b for b in server.bodies
                                          if any(m["role"] == "tool" for m in b["messages"]))
    assert first["tools"][0]["type"] == "function"
    assert second["messages"][-2]["tool_calls"][0]["id"] == "call_abc"
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "call_abc",
                                      "content": second["messages"][-1]["content"]}
