"""An agent run's episodes for its page: every execution the budget paid for (the events name
each as a skill and a sample: `ExecutionsCharged.pairs`, a baseline's `TargetExecuted`), read
back from the run's cache as `stratune view --episode` reads one (strict: nothing is sent, no
tool runs), and laid out turn by turn: what the model said, each tool call with its arguments
and its result (errors marked, a call the turn limit left unrun marked), and the final answer
or why there is none. A Claude Code episode shows its compacted transcript instead: its CLI's
messages are not in the run's cache, only its API calls and the episode's reply.

A run that is not an agent run has no episodes (the section stays hidden); an episode the cache
does not hold yet (a live run) is left for the next look."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from llm_cache.records import Response
from replay.dashboard.executions import FailureReader
from replay.harness.task import HarnessTask
from stratune_core.records.method_events import TargetExecuted
from stratune_core.state.events import Event, ExecutionsCharged
from stratune_core.tasks.agent import AgentTask, walk

MAX_EPISODES = 400  # a page stays a few megabytes at most
MAX_TEXT = 1200  # an argument, a result or an answer shown in full up to this


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def paid_pairs(events: Sequence[Event]) -> list[tuple[int, str, str, str]]:
    """(round, purpose, skill id, sample id) of each execution paid for, first time only."""
    seen: dict[tuple[str, str], tuple[int, str, str, str]] = {}
    for e in events:
        pairs: Iterable[tuple[str, str]] = ()
        if isinstance(e, ExecutionsCharged):
            pairs = e.pairs
        elif isinstance(e, TargetExecuted):
            pairs = ((e.skill_id, s) for s in e.sample_ids)
        for skill_id, sample_id in pairs:
            seen.setdefault((skill_id, sample_id), (e.round, str(e.purpose.value), skill_id,
                                                    sample_id))
    return list(seen.values())


def skill_texts(events: Sequence[Event]) -> dict[str, str]:
    """Every skill text the events carry, by id (a StraTune run's and a baseline's)."""
    return {e.skill_id: e.text for e in events  # type: ignore[attr-defined]
            if isinstance(getattr(e, "skill_id", None), str)
            and isinstance(getattr(e, "text", None), str)}


def _turns(task: AgentTask, responses: tuple[Response, ...]) -> tuple[list[dict[str, Any]],
                                                                    str | None, str]:
    turns = walk(task.toolbox, responses)
    shown = []
    for number, turn in enumerate(turns, 1):
        results = {r.tool_use_id: r for r in turn.results}
        calls = []
        for call in turn.reply.tool_calls:
            result = results.get(call.id)
            calls.append({"name": call.name, "arguments": _cut(call.input),
                          "result": None if result is None else _cut(result.content),
                          "error": bool(result is not None and result.is_error)})
        said = turn.reply.text.strip()
        if not calls and number == len(turns):
            said = ""  # the final answer, shown once below
        shown.append({"turn": number, "said": _cut(said), "calls": calls})
    final = turns[-1] if turns else None
    if final is not None and final.reply.tool_calls and not final.results:
        return shown, None, (f"the turn limit ({task.toolbox.max_turns} model turns) ended it "
                             "while it still called tools")
    return shown, _cut(final.reply.text if final is not None else ""), "final answer"


def _harness(responses: tuple[Response, ...]) -> tuple[str | None, str]:
    (reply,) = responses
    episode = json.loads(reply.text) if reply.text.startswith("{") else {"result": reply.text}
    if episode.get("error"):
        return None, f"the episode failed: {episode['error']}"
    return _cut(str(episode.get("result", ""))), "final answer"


def episodes(events: Sequence[Event], reader: FailureReader) -> tuple[list[dict[str, Any]], str]:
    """The run's episodes in the order they were paid for, and a note (what is left out)."""
    task = reader.task
    if not isinstance(task, AgentTask | HarnessTask):
        return [], ""
    paid = paid_pairs(events)
    texts = skill_texts(events)
    shown: list[dict[str, Any]] = []
    for round_, purpose, skill_id, sample_id in paid[:MAX_EPISODES]:
        text = texts.get(skill_id)
        found = None if text is None else reader.execution(text, skill_id, sample_id)
        if found is None:
            continue
        sample, score, responses = found
        entry: dict[str, Any] = {
            "sample": sample_id, "skill": skill_id, "round": round_ + 1, "purpose": purpose,
            "score": score.value, "summary": score.summary, "input": task.describe(sample),
            "expected": task.expected(sample), "calls": len(responses)}
        if isinstance(task, AgentTask):
            entry["turns"], entry["answer"], entry["end"] = _turns(task, responses)
        else:
            entry["transcript"] = score.output
            entry["answer"], entry["end"] = _harness(responses)
        shown.append(entry)
    note = ""
    if len(paid) > MAX_EPISODES:
        note = (f"the first {MAX_EPISODES} of {len(paid)} episodes; `stratune view DIR "
                "--candidate ID --episode SAMPLE` shows any other")
    return shown, note
