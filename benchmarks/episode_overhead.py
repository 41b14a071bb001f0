"""Benchmark: what an agent episode costs in time beyond the model's own, against a single-call
execution, measured in one run so the ratios hold whatever the machine.

Scripted models answer at once, so what is timed is StraTune's part. On the bundled `stock`
task, through the run's cached client (a fresh cache, as a run records it):

- **single call**: the task as a `call` target, one model call per execution;
- **episode**: the same samples as agent episodes with the task's real tools (`stock`,
  `price`): the model calls one tool, reads its result and answers (two model calls and one
  tool call, the tool run in a forked child as every tool call is);
- each again from the cache (a rerun, a resume, `stratune replay`).

With the Claude Code CLI installed (`claude-agent-sdk`), against the fake Messages API whose
model loads the skill and answers (two API calls): one **direct call** of the model
(`anthropic:`), the **bare CLI** in the episode's directory tree talking to the fake API
itself, and the **claude-code episode** (the proxy, the cache and, where it runs, bubblewrap).
Its ratios say what an episode costs against a call, and what the harness adds to the CLI.

Run: .venv/bin/python -m benchmarks.episode_overhead [--quick]
(quick: 4 samples once, one timed CLI run of each kind)
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import BenchResult, bench_parser, report, results_dir
from llm_cache.backends.function import FunctionBackend
from llm_cache.client import CachedLLM
from llm_cache.records import (
    CallKind,
    Message,
    Request,
    Response,
    Role,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from replay.tasks.bundled import TOOLS, load
from replay.tools.toolset import load_toolset
from stratune_core.records.task import Task
from stratune_core.tasks.agent import AgentTask
from stratune_core.tasks.executions import run_jobs

SAMPLES, QUICK_SAMPLES = 120, 4  # the task's whole training split
REPEATS, QUICK_REPEATS = 5, 1
CLI_RUNS, QUICK_CLI_RUNS = 6, 1
SKILL = "Answer with the number only."
CC_MODEL = "claude-haiku-4-5"


def _answer_or_call(request: Request) -> Response:
    """One tool call with the code as the question writes it, then the result as the answer."""
    results = [b for m in request.messages for b in m.content if isinstance(b, ToolResultBlock)]
    usage = Usage(input_tokens=10, output_tokens=5)
    if results or not request.tools:
        return Response(text=results[-1].content if results else "1", usage=usage)
    question = request.messages[0].text()
    code = next((w.strip("?.,") for w in question.split() if w.startswith("SKU-")), "SKU-0")
    name = "price" if ("price" in question or "cost" in question) else "stock"
    call = ToolUseBlock(id="toolu_0", name=name, input=json.dumps({"sku": code}))
    return Response(text="", stop_reason="tool_use", tool_calls=(call,), usage=usage)


def _timed(task: Task, backends: dict[Role, Any], n: int) -> tuple[float, float, int]:
    """(seconds per execution live, the same from the cache, calls per execution)."""
    samples = task.split("train")[:n]
    jobs = [(SKILL, s) for s in samples]
    with tempfile.TemporaryDirectory(prefix="stratune-bench-") as tmp, \
            CachedLLM.open(Path(tmp) / "cache", backends=backends) as llm:
        start = time.perf_counter()
        calls = run_jobs(task, llm, CC_MODEL, jobs)
        live = time.perf_counter() - start
        start = time.perf_counter()
        run_jobs(task, llm, CC_MODEL, jobs)
        cached = time.perf_counter() - start
    per = sum(len(c.requests) for c in calls) / len(calls)
    return live / len(jobs), cached / len(jobs), round(per, 2)


def scripted(n: int, repeats: int) -> dict[str, Any]:
    base = load("stock")
    toolset = load_toolset((TOOLS["stock"],), 4, call_seconds=30.0)
    episode_task = AgentTask(base=base, toolbox=toolset.toolbox())

    def backends(with_tools: bool) -> dict[Role, Any]:
        found: dict[Role, Any] = {Role.TARGET: FunctionBackend(_answer_or_call, name="script")}
        if with_tools:
            found[Role.TOOL] = toolset.backend(call_seconds=30.0, episode_seconds=120.0)
        return found

    single, episode = [], []
    for _ in range(repeats):  # interleaved, so a burst of load hits both alike
        single.append(_timed(base, backends(False), n))
        episode.append(_timed(episode_task, backends(True), n))

    tools = backends(True)[Role.TOOL]
    call = Request(role=Role.TOOL, model=toolset.toolbox().model_of("stock"), system="bench",
                   messages=(Message.user('{"sku": "SKU-0000"}'),), max_tokens=1,
                   kind=CallKind.TOOL_CALL)
    # one tool call alone (in a run, a wave's calls overlap, two at a time): its forked child
    tool_s = _median_of(min(n, 20), lambda i: tools.run(call))

    def median(rows: list[tuple[float, float, int]], i: int) -> float:
        return statistics.median(r[i] for r in rows)

    return {"samples": n, "repeats": repeats,
            "single_call_s": median(single, 0), "episode_s": median(episode, 0),
            "single_call_cached_s": median(single, 1), "episode_cached_s": median(episode, 1),
            "calls_per_episode": episode[0][2], "tool_call_s": tool_s,
            "ratio": median(episode, 0) / median(single, 0),
            "ratio_cached": median(episode, 1) / median(single, 1)}


def _fake_model(body: dict[str, Any]) -> Any:
    """Inside an episode (the CLI offers tools), the harness world's model: it loads the skill
    and answers; a direct call is answered at once."""
    from tests.support.harness_world import model

    return model(body) if body.get("tools") else "42"


def _median_of(runs: int, fn: Callable[[int], None]) -> float:
    """The median of `runs` timed calls of `fn`, after one untimed (a first call's start-up:
    the SDK's client, the CLI's files read cold, is not what a run pays per execution)."""
    fn(0)
    seconds = []
    for i in range(1, runs + 1):
        start = time.perf_counter()
        fn(i)
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def claude_code(runs: int) -> dict[str, Any]:
    """Seconds of a direct call, a bare CLI run and a claude-code episode (each the median of
    `runs`, each on a question of its own so nothing is answered from a cache)."""
    try:
        from replay.harness.cli import cli_path

        cli = cli_path()
    except Exception as exc:  # noqa: BLE001 (the extra is optional: say why, measure the rest)
        return {"skipped": " ".join(str(exc).split())[:200]}
    from llm_cache.testing.fake_server import FakeAnthropicServer
    from replay.harness.episode import EpisodeSpec, run_episode, session_id
    from replay.models import specs as models
    from replay.rundir.serde import TaskSpec
    from tests.support.harness_world import write_task

    saved = {k: os.environ.get(k) for k in ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")}
    with tempfile.TemporaryDirectory(prefix="stratune-bench-") as tmp, \
            FakeAnthropicServer(responder=_fake_model) as fake:
        os.environ.update(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="sk-ant-bench")
        try:
            folder = write_task(Path(tmp) / "task", n=3 * (runs + 1))
            spec = TaskSpec(spec=str(folder), scorer="exact", kind="claude-code")
            task = models.load_task(spec)
            samples = task.split("train")
            target = f"claude-code:{CC_MODEL}"
            canonical = models.canonical_model(target)
            direct = models.build_backend(f"anthropic:{CC_MODEL}")
            harness = models.build_backend(target)
            with CachedLLM.open(Path(tmp) / "direct", backends={Role.TARGET: direct}) as llm:
                def one_call(i: int) -> None:
                    (request,) = task.base.requests(SKILL, samples[i], CC_MODEL)
                    llm.complete([request])
                direct_s = _median_of(runs, one_call)

            def bare(i: int) -> None:  # the episode's tree, the CLI straight to the fake API
                (request,) = task.requests(SKILL, samples[runs + 1 + i], canonical)
                setup = json.loads(request.system)
                run, _ = run_episode(EpisodeSpec(
                    cli=str(cli), model=CC_MODEL, skill=setup["skill"], files=setup["files"],
                    prompt=request.user_text(), tools=tuple(setup["tools"]),
                    max_turns=setup["max_turns"], seconds=120.0,
                    session_id=session_id(str(i)), sandboxed=False), proxy_url=fake.url,
                    socket=None)
                assert run.returncode == 0, run.stderr
            bare_s = _median_of(runs, bare)
            with CachedLLM.open(Path(tmp) / "episodes", backends={Role.TARGET: harness}) as llm:
                def episode(i: int) -> None:
                    sample = samples[2 * (runs + 1) + i]
                    (calls,) = run_jobs(task, llm, canonical, [(SKILL, sample)])
                    assert '"error": ""' in calls.responses[0].text, calls.responses[0].text
                episode_s = _median_of(runs, episode)
            sandboxed = bool(getattr(harness, "sandbox", False))
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    return {"runs": runs, "direct_call_s": direct_s, "bare_cli_s": bare_s,
            "episode_s": episode_s, "sandboxed": sandboxed,
            "episode_to_direct": episode_s / direct_s, "episode_to_bare_cli": episode_s / bare_s,
            "harness_added_s": episode_s - bare_s}


def measure(quick: bool) -> BenchResult:
    agent = scripted(QUICK_SAMPLES if quick else SAMPLES, QUICK_REPEATS if quick else REPEATS)
    cc = claude_code(QUICK_CLI_RUNS if quick else CLI_RUNS)
    summary = (f"an episode (1 tool call, {agent['calls_per_episode']:g} calls) takes "
               f"{agent['ratio']:.1f}x a single-call execution live "
               f"({agent['episode_s'] * 1000:.1f} vs {agent['single_call_s'] * 1000:.1f} ms), "
               f"{agent['ratio_cached']:.1f}x from the cache (one tool call alone, not in a "
               f"wave: {agent['tool_call_s'] * 1000:.1f} ms, a forked child)")
    if "skipped" in cc:
        summary += f"; claude-code not measured ({cc['skipped']})"
    else:
        summary += (f"; a claude-code episode {cc['episode_to_direct']:.0f}x a direct call "
                    f"({cc['episode_s']:.2f} vs {cc['direct_call_s']:.3f} s), "
                    f"{cc['episode_to_bare_cli']:.2f}x the bare CLI ({cc['bare_cli_s']:.2f} s)")
    return BenchResult(name="episode_overhead", figure=round(agent["ratio"], 3),
                       target=float("inf"), unit="x", summary=summary,
                       details={"agent": agent, "claude_code": cc, "ratio": agent["ratio"],
                                "load_average": os.getloadavg()[0]})


def main(argv: Sequence[str] | None = None) -> BenchResult:
    args = bench_parser(__doc__).parse_args(argv)
    return report(measure(args.quick), results_dir(args))


if __name__ == "__main__":
    main()
