"""An episode that exceeds its limits is a failed execution whose reason the run keeps, never a
crash: a python-tools episode past `--max-turns` or past its tools' time limits (per call and
per episode), and a Claude Code episode past its `--max-turns` or its wall-clock limit (the
real CLI against the tests' fake Messages API). The reason is in the trajectory the optimizer
was shown (its feedback request, in the run's cache) and in `stratune view --episode`."""

from __future__ import annotations

import io
import json
import re
import time
from pathlib import Path

import pytest
from rich.console import Console

from llm_cache.records import Request, Response, ToolUseBlock, Usage
from llm_cache.store import CacheStore
from llm_cache.testing.fake_server import FakeAnthropicServer
from replay.dashboard.run_data import run_sections
from replay.models.extensions import Extensions, ModelKind
from replay.tools.declared import tool
from tests.support.cli import stratune
from tests.support.harness_world import Responder, write_task
from tests.test_claude_code import TARGET, _train, needs_cli
from tests.test_claude_code import stratune as claude_code_cli

AGENT_RUN = ("--task", "stock", "--target", "scripted:agent-target",
             "--optimizer", "scripted:agent-optimizer")


def _events(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]


def _optimizer_prompts(out: Path) -> list[str]:
    """Every optimizer request's text the run recorded (its feedback and generation prompts)."""
    store = CacheStore(out / "cache")
    try:
        found = [json.loads(store.get(k).canonical) for k in list(store.keys())]
    finally:
        store.close()
    return ["\n".join(_texts(r["messages"])) for r in found if r["role"] == "optimizer"]


def _texts(value: object) -> list[str]:
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in ([v] if k == "text" and isinstance(v, str)
                                                       else _texts(v))]
    return [t for v in value for t in _texts(v)] if isinstance(value, list) else []


def _initial_batch(out: Path) -> dict:
    events = _events(out)
    initial = events[0]["initial_skill_id"]
    return next(e for e in events if e["_type"] == "BatchExecuted" and e["skill_id"] == initial)


def test_an_episode_past_max_turns_is_a_failed_execution_with_its_reason(tmp_path):
    out = tmp_path / "run"
    done = stratune("train", *AGENT_RUN, "--limit", "8", "--max-turns", "2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    first = _initial_batch(out)
    assert first["mean_score"] == 0.0 and first["solved"] == 0
    shown = "\n".join(_optimizer_prompts(out))
    assert "(not run: the turn limit)" in shown and "no final answer (the turn limit)" in shown
    initial = _events(out)[0]["initial_skill_id"]
    view = stratune("view", str(out), "--candidate", initial[:8], "--episode",
                    first["sample_ids"][0], COLUMNS="200")
    text = " ".join(view.stdout.split())
    assert view.returncode == 0 and "score 0.00" in text, view.stdout + view.stderr
    assert "problem: reached the limit of 2 model turns still calling tools" in text


def _slow(seconds: float) -> str:
    time.sleep(seconds)
    return "never seen"


@tool
def stock(sku: str) -> int:
    """The number of units of a product in stock (this one hangs).

    Args:
        sku: the product code
    """
    return int(_slow(30))


@tool
def price(sku: str) -> str:
    """The unit price of a product (this one hangs).

    Args:
        sku: the product code
    """
    return _slow(30)


HANGING = [stock, price]


def _turns_target(request: Request) -> Response:
    """Calls `stock` every turn, each time with other arguments (a call with the same arguments
    in the same episode is the same request, which the cache answers)."""
    turn = sum(1 for m in request.messages if m.role == "assistant")
    call = ToolUseBlock(id=f"toolu_{turn}", name="stock", input=json.dumps({"sku": f"SKU-{turn}"}))
    return Response(text="", stop_reason="tool_use", tool_calls=(call,),
                    usage=Usage(input_tokens=10, output_tokens=5))


def _world() -> Extensions:
    from llm_cache.backends.function import FunctionBackend
    from tests.support.agent_world import agent_optimizer

    fns = {"turns-target": _turns_target, "agent-optimizer": agent_optimizer}
    return Extensions(models={"scripted": ModelKind(
        canonical=lambda body: body, backend=lambda body: FunctionBackend(fns[body], name=body))})


def test_tool_timeouts_per_call_and_per_episode_fail_the_episode_with_their_reasons(
        tmp_path, monkeypatch):
    """The first call stops at the call's limit, the second at what is left of the episode's
    tool time, the third finds it spent, and the episode ends on its turn limit: each reason
    is in the trajectory the optimizer reads, and the run finishes."""
    from replay.models import specs as models
    from replay.run import runner
    from replay.run.options import RunOptions
    from replay.rundir.serde import TaskSpec
    from replay.targets import kinds

    monkeypatch.setattr(kinds, "CALL_SECONDS", 0.3)
    monkeypatch.setattr(kinds, "EPISODE_SECONDS", 0.5)
    out = tmp_path / "run"
    spec = TaskSpec(spec="stock", limit=2, tools=("tests.test_episode_limits:HANGING",),
                    max_turns=4)
    options = RunOptions(task=spec, target="scripted:turns-target",
                         optimizer="scripted:agent-optimizer", overrides=(("budget", 4),))
    with models.using(_world()):
        code = runner.train(options, str(out), Console(file=io.StringIO(), width=100))
    assert code == runner.EXIT_OK
    assert _initial_batch(out)["mean_score"] == 0.0
    shown = "\n".join(_optimizer_prompts(out))
    first = 'turn 1 called stock(sku="SKU-0") -> ERROR error: stock did not finish within 0.3 s'
    assert first in shown, shown[:3000]
    second = re.search(r'turn 2 called stock\(sku="SKU-1"\) -> ERROR error: stock did not '
                       r"finish within (0\.\d+) s", shown)
    assert second is not None and float(second.group(1)) < 0.3
    assert "turn 3 called stock" in shown and "tool time (0.5 s) is spent" in shown
    assert "no final answer (the turn limit)" in shown


# ---- the Claude Code harness: the real CLI, the fake Messages API ----------------------------

class _Slow:
    """The harness world's responder, with every model call inside an episode held `seconds`."""

    def __init__(self, seconds: float) -> None:
        self.inner, self.seconds = Responder(), seconds

    def __call__(self, body: dict) -> object:
        if body.get("tools"):
            time.sleep(self.seconds)
        return self.inner(body)


def _claude_code_run(tmp_path: Path, responder: object, *extra: str, target: str = ""
                     ) -> tuple[Path, str]:
    task = write_task(tmp_path / "task", n=2)
    out = tmp_path / "run"
    with FakeAnthropicServer(responder=responder) as fake:
        done = _train(task, out, *extra, "--budget", "4", target=target or TARGET, fake=fake)
    assert done.returncode == 0, done.stderr[-2000:]
    return out, "\n".join(_optimizer_prompts(out))


@pytest.mark.slow
@needs_cli
def test_a_claude_code_episode_past_max_turns_is_a_failed_execution(tmp_path):
    out, shown = _claude_code_run(tmp_path, Responder(), "--max-turns", "1")
    assert _initial_batch(out)["mean_score"] == 0.0
    assert "failed: reached --max-turns 1 before a final answer" in shown, shown[-3000:]
    assert "problem: the episode failed: reached --max-turns 1" in shown
    failed = [e for e in run_sections(out)["episodes"] if e["score"] == 0.0]  # the run page
    assert failed and all(e["answer"] is None and "reached --max-turns 1" in e["end"]
                          and "loaded the skill" in e["transcript"] for e in failed)
    # the recorded failure replays: the CLI, run again offline, stops at the same turn
    replayed = claude_code_cli("replay", str(out), ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    assert replayed.returncode == 0 and "replay OK" in replayed.stdout, replayed.stdout


@pytest.mark.slow
@needs_cli
def test_a_claude_code_episode_past_its_wall_clock_limit_is_a_failed_execution(tmp_path):
    out, shown = _claude_code_run(tmp_path, _Slow(20.0),
                                  target=f"{TARGET}?episode_seconds=4")
    assert _initial_batch(out)["mean_score"] == 0.0
    assert "failed: exceeded the episode's wall-clock limit of 4 s" in shown, shown[-3000:]
    assert "problem: the episode failed: exceeded the episode's wall-clock limit" in shown
