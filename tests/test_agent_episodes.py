"""Agent episodes: one target execution is a tool-using episode (stratune_core/tasks/agent.py),
its model calls and tool calls all through the cache, one execution of the budget, learned from
its trajectories, replayed offline with pure tools recomputed, and resumed identically after a
SIGKILL mid-episode."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from llm_cache.records import Response, ToolResultBlock, ToolSpec, ToolUseBlock
from replay.tools.backend import ToolBackend
from replay.tools.declared import declare, tool
from stratune_core.tasks.agent import AgentTask, Toolbox, render, walk
from tests.support.cli import stratune

AGENT_RUN = ("--task", "stock", "--limit", "24", "--target", "scripted:agent-target",
             "--optimizer", "scripted:agent-optimizer")
BOX = Toolbox(tools=(ToolSpec(name="stock", description="units", schema="{}"),), max_turns=3)


def call(name: str = "stock", n: int = 0, arguments: str = '{"sku":"SKU-1"}') -> Response:
    return Response(text="", stop_reason="tool_use",
                    tool_calls=(ToolUseBlock(id=f"t{n}", name=name, input=arguments),))


def test_the_walk_pairs_each_call_with_its_result_and_answers_unknown_tools_itself():
    turns = walk(BOX, [call(n=0), Response(text="7", stop_reason="tool_result"),
                       call("nosuch", n=1), Response(text="7")])
    assert [t.results[0].content for t in turns[:2]] == ["7", turns[1].results[0].content]
    assert turns[1].results[0].is_error and "no tool 'nosuch'" in turns[1].results[0].content
    assert turns[2].reply.text == "7" and not turns[2].results


def test_an_episode_ends_at_its_turn_limit_without_running_the_last_calls():
    replies = [call(n=0), Response(text="1"), call(n=1), Response(text="1"), call(n=2)]
    turns = walk(BOX, replies)
    assert len(turns) == 3 and turns[2].missing == () and turns[2].results == ()
    text = render(turns, "", ended=True)
    assert "not run: the turn limit" in text and text.endswith("no final answer (the turn limit)")


def test_follow_ups_ask_the_tools_then_the_model_with_the_whole_conversation(tmp_path):
    for split in ("train", "test"):
        (tmp_path / f"{split}.jsonl").write_text(json.dumps(
            {"id": f"{split}-a", "input": "How many SKU-1?", "expected": "7"}) + "\n")
    task = AgentTask(base=_custom(tmp_path), toolbox=BOX)
    sample = task.split("train")[0]
    (first,) = task.requests("skill", sample, "m")
    assert first.tools == BOX.tools
    (tool_request,) = task.follow_ups("skill", sample, "m", (call(),))
    assert tool_request.role.value == "tool" and tool_request.messages[0].text() == '{"sku":"SKU-1"}'
    (second,) = task.follow_ups("skill", sample, "m", (call(), Response(text="7")))
    assert [m.role for m in second.messages] == ["user", "assistant", "user"]
    assert isinstance(second.messages[2].content[0], ToolResultBlock)
    assert task.follow_ups("skill", sample, "m", (call(), Response(text="7"),
                                                  Response(text="7"))) == ()
    assert task.score(sample, (call(), Response(text="7"), Response(text="7"))).value == 1.0


def _custom(folder: Path):
    from replay.tasks import custom

    return custom.load(folder, scorer="numeric")


# ---- the tool backend: errors, hangs and sizes are results, never crashes -----------------

def hangs(seconds: int) -> str:
    """Sleeps."""
    time.sleep(seconds)
    return "late"


def fails(x: int) -> str:
    """Raises."""
    raise RuntimeError(f"broken {x}")


def huge(n: int) -> str:
    """Says a lot."""
    return "x" * n


def _ask(backend: ToolBackend, name: str, arguments: str, episode: str = "e") -> Response:
    import asyncio

    from llm_cache.records import CallKind, Message, Request, Role

    request = Request(role=Role.TOOL, model=f"tool:{name}@f", system=episode,
                      messages=(Message.user(arguments),), max_tokens=1, kind=CallKind.TOOL_CALL)
    return asyncio.run(backend.acomplete(request))


def test_a_hanging_tool_is_stopped_by_its_timeout_and_the_episode_by_its_limit():
    backend = ToolBackend([declare(hangs)], call_seconds=0.5, episode_seconds=0.8)
    first = _ask(backend, "hangs", '{"seconds": 30}')
    assert first.stop_reason == "tool_error" and "did not finish within 0.5 s" in first.text
    second = _ask(backend, "hangs", '{"seconds": 30}')  # what is left of the episode's 0.8 s
    left = float(second.text.split("within ")[1].split(" s")[0])
    assert 0 < left < 0.5
    assert "tool time (0.8 s) is spent" in _ask(backend, "hangs", '{"seconds": 1}').text
    assert "did not finish" in _ask(backend, "hangs", '{"seconds": 30}', episode="other").text


def test_exceptions_bad_arguments_bad_json_and_oversized_results_are_error_results():
    backend = ToolBackend([declare(fails), declare(huge)])
    assert _ask(backend, "fails", '{"x": 3}').text == "error: RuntimeError: broken 3"
    bad = _ask(backend, "fails", '{"x": "three"}')
    assert bad.stop_reason == "tool_error" and "invalid arguments for fails: x:" in bad.text
    assert "not JSON" in _ask(backend, "fails", "{x").text
    assert "no tool 'nosuch'" in _ask(backend, "nosuch", "{}").text
    long = _ask(backend, "huge", '{"n": 100000}')
    assert long.stop_reason == "tool_error" and "cut to the limit of 4,000" in long.text


def test_a_tool_is_declared_from_its_signature_and_refused_without_hints():
    def untyped(a):  # noqa: ANN001
        """Has no hint."""

    def lookup(code: str, limit: int = 3) -> str:
        """Looks a code up.

        Args:
            code: the code to look up
        """
        return code

    declared = declare(tool(lookup, pure=True))
    schema = json.loads(declared.spec.schema)
    assert declared.pure and schema["required"] == ["code"]
    assert schema["properties"]["code"]["description"] == "the code to look up"
    from stratune_core.records.errors import ConfigError

    with pytest.raises(ConfigError, match="parameter 'a' has no type hint"):
        declare(untyped)


# ---- whole runs through the command line ----------------------------------------------------

def test_a_run_learns_from_trajectories_and_replays_offline_rechecking_pure_tools(tmp_path):
    out = tmp_path / "run"
    done = stratune("train", *AGENT_RUN, "--out", str(out), "--test-eval")
    assert done.returncode == 0, done.stderr
    scores = json.loads((out / "evaluation.json").read_text())["scores"]
    assert sorted(scores.values()) == [0.0, 1.0]  # initial 0.000, learned 1.000
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["toolbox"]["max_turns"] == 8
    assert manifest["task"]["tools"] == ["replay.data.stock.tools:TOOLS"]
    final = (out / "final_skill.txt").read_text()
    assert "SKU- included" in final and "do not call any tool again" in final
    usage = json.loads((out / "usage.json").read_text())
    kinds = {r["kind"] for r in usage["rows"]}
    assert {"tool_call", "target_execution"} <= kinds
    assert manifest["events"] and json.loads((out / "events.jsonl").read_text().splitlines()[-1]
                                             )["spent"] <= 144
    replayed = stratune("replay", str(out))
    assert replayed.returncode == 0 and "replay OK" in replayed.stdout, replayed.stdout
    shown = stratune("view", str(out), "--episode", "train-stock-00")
    assert "turn 1 called stock(sku=\"SKU-" in shown.stdout and "final answer:" in shown.stdout


def test_replay_recomputes_a_pure_tool_and_names_a_changed_result(tmp_path):
    """A tool call's recorded result that its pure tool no longer gives fails the replay, in
    one line naming the tool, before any event differs."""
    from llm_cache.store import CacheStore
    from replay.tools.toolset import rechecking
    from stratune_core.tasks.agent import Toolbox

    out = tmp_path / "run"
    assert stratune("train", *AGENT_RUN, "--out", str(out)).returncode == 0
    store = CacheStore(out / "cache")
    try:
        stored = {k: store.get(k) for k in list(store.keys())}
        key = next(k for k, e in stored.items()
                   if json.loads(e.canonical)["role"] == "tool" and "SKU-" in e.canonical)
        entry = store.get(key)
        import attrs

        store.put(key, attrs.evolve(entry, response=attrs.evolve(entry.response, text="999999")))
    finally:
        store.close()
    replayed = stratune("replay", str(out))
    assert replayed.returncode != 0 and "declared pure" in replayed.stderr + replayed.stdout
    tools, notes = rechecking(["nosuchmodule:TOOLS"], Toolbox(tools=()))
    assert tools == () and "not rechecked" in notes[0]


def test_sigkill_in_mid_episode_then_the_rerun_gives_byte_identical_events(tmp_path):
    reference, killed = tmp_path / "reference", tmp_path / "killed"
    assert stratune("train", *AGENT_RUN, "--out", str(reference)).returncode == 0
    first = stratune("train", *AGENT_RUN, "--out", str(killed),
                     STRATUNE_TEST_KILL_AFTER="14")  # the second turn of an episode
    assert first.returncode != 0
    assert stratune("train", *AGENT_RUN, "--out", str(killed)).returncode == 0
    assert (killed / "events.jsonl").read_bytes() == (reference / "events.jsonl").read_bytes()


@pytest.mark.parametrize(("tools", "said"), [
    ("nosuchmodule:TOOLS", "does not import"),
    ("replay.data.stock.tools:nosuch", "has no 'nosuch'"),
    ("tests.test_agent_episodes:UNDOCUMENTED", "no docstring"),
    ("replay.data.stock.tools:TOOLS,replay.data.stock.tools:TOOLS", "two tools are named"),
    ("tests.test_agent_episodes:NOT_A_LIST", "not a list of functions"),
    ("tests.test_agent_episodes:UNTYPED", "has no type hint"),
    ("nocolon", "write module:attr"),
])
def test_bad_tools_are_one_line_exit_2_before_anything_is_written(tmp_path, tools, said):
    out = tmp_path / "run"
    done = stratune("train", *AGENT_RUN, "--tools", tools, "--out", str(out))
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and not out.exists()


NOT_A_LIST = 42


def _untyped(sku):  # noqa: ANN001
    """No hint."""


UNTYPED = [_untyped]


def _undocumented(sku: str) -> str:
    return sku


UNDOCUMENTED = [_undocumented]


def test_max_turns_without_tools_and_out_of_range_are_refused(tmp_path):
    no_tools = stratune("train", "--task", "demo", "--limit", "8", "--target",
                        "scripted:toy-target", "--optimizer", "scripted:toy-optimizer",
                        "--max-turns", "3", "--out", str(tmp_path / "a"))
    assert no_tools.returncode == 2 and "give --tools too" in no_tools.stderr
    too_many = stratune("train", *AGENT_RUN, "--max-turns", "99", "--out", str(tmp_path / "b"))
    assert too_many.returncode == 2 and "--max-turns 99" in too_many.stderr


def test_plan_counts_an_episode_s_turns():
    done = stratune("plan", *AGENT_RUN[:4], "--target", "anthropic:claude-haiku-4-5",
                    "--optimizer", "anthropic:claude-sonnet-4-6", "--max-turns", "5",
                    ANTHROPIC_API_KEY="k")
    assert done.returncode == 0 and "at most 5" in " ".join(done.stdout.split()), done.stdout


@pytest.mark.skipif(os.environ.get("STRATUNE_NO_SANDBOX") == "1", reason="no sandbox")
def test_the_python_code_tool_runs_in_the_sandbox():
    from replay.tasks.sandbox import choose
    from replay.tools.code_tools import code_tool

    backend = ToolBackend([code_tool("python", choose(), 20.0)])
    done = _ask(backend, "python", json.dumps({"code": "import os; print(6 * 7, os.getcwd())"}))
    assert done.stop_reason == "tool_result" and done.text.startswith("42 "), done.text
    fails_ = _ask(backend, "python", json.dumps({"code": "raise SystemExit(3)"}))
    assert fails_.stop_reason == "tool_error" and "exit code 3" in fails_.text
    net = _ask(backend, "python", json.dumps({"code": (
        "import socket\ntry:\n socket.create_connection(('1.1.1.1', 80), timeout=2)\n"
        " print('online')\nexcept OSError as e:\n print('offline')")}))
    assert "offline" in net.text
