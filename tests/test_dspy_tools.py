"""`stratune.dspy` with a program that calls tools (`dspy.ReAct`): each tool call is a cached
request of the execution, so the program's reruns between waves, a second compile and a replay
run no tool again; the refusal of tool programs is gone."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import dspy
import pytest

from llm_cache.testing.fake_server import FakeAnthropicServer
from replay.dspy_program.task import ProgramTask
from tests.support import dspy_world as world

LOG: list[str] = []  # the file each real tool call appends to (tools run in a forked child)
UNITS = {"SKU-1001": 12, "SKU-1002": 7, "SKU-1003": 30, "SKU-1004": 0}


def stock(sku: str) -> int:
    """The units of a product in stock."""
    with open(LOG[0], "a", encoding="utf-8") as log:
        log.write(sku + "\n")
    return UNITS[sku]


def _calls() -> list[str]:
    import os

    return open(LOG[0], encoding="utf-8").read().split() if os.path.exists(LOG[0]) else []


def program() -> dspy.Module:
    return dspy.ReAct("question -> answer", tools=[stock], max_iters=3)


def metric(example: dspy.Example, prediction: dspy.Prediction, trace: Any = None) -> float:
    return float(str(prediction.answer).strip() == example.answer)


def examples() -> list[dspy.Example]:
    return [dspy.Example(question=f"How many units of {sku} are in stock?",
                         answer=str(units)).with_inputs("question")
            for sku, units in UNITS.items()]


def _user(body: Mapping[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def respond(body: Mapping[str, Any]) -> str:
    if body["model"] != world.TARGET:
        return world.responder()(body)
    system = "".join(b.get("text", "") for b in body.get("system") or []) \
        if isinstance(body.get("system"), list) else str(body.get("system", ""))
    user = _user(body)
    sku = re.search(r"SKU-\d{4}", user).group(0)
    seen = re.findall(r"observation_\d+ ## \]\]\n(.+)", user)
    if "next_tool_name" in system:
        if seen:
            return ("[[ ## next_thought ## ]]\ndone\n\n[[ ## next_tool_name ## ]]\nfinish\n\n"
                    "[[ ## next_tool_args ## ]]\n{}\n\n[[ ## completed ## ]]")
        return ("[[ ## next_thought ## ]]\nlook it up\n\n[[ ## next_tool_name ## ]]\nstock\n\n"
                f'[[ ## next_tool_args ## ]]\n{{"sku": "{sku}"}}\n\n[[ ## completed ## ]]')
    value = seen[0].strip() if seen else "?"
    return f"[[ ## reasoning ## ]]\nfrom the tool\n\n[[ ## answer ## ]]\n{value}\n\n[[ ## completed ## ]]"


@pytest.fixture
def server(monkeypatch):
    with FakeAnthropicServer(responder=respond) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
        yield fake


def test_a_react_program_runs_its_tools_through_the_cache(tmp_path, server):
    from stratune.dspy import StraTune

    LOG[:] = [str(tmp_path / "calls.log")]
    optimizer = StraTune(metric, target=f"anthropic:{world.TARGET}",
                         optimizer=f"anthropic:{world.OPTIMIZER}", out=tmp_path / "run",
                         budget=12, progress=False)
    optimizer.compile(program(), trainset=examples())
    first = _calls()
    assert first and set(first) <= set(UNITS)
    assert optimizer.result is not None and optimizer.result.spent >= 4
    optimizer.compile(program(), trainset=examples())  # read back: nothing runs again
    optimizer.replay(program(), trainset=examples())  # offline: the cache answers the tools
    assert _calls() == first


def test_a_tool_call_is_a_cached_request_of_the_execution():
    task = ProgramTask(program(), metric, name="react", trainset=examples()[:1])
    sample = task.split("train")[0]
    assert task.tool_backend() is not None
    (first,) = task.requests("", sample, world.TARGET)
    assert first.role.value == "target"
