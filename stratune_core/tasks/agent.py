"""Agent episodes: one target execution in which the model runs under the skill with the task's
tools, calls them, reads their results and answers, over several turns.

An episode is a task of the `FollowUps` kind (`records/task.py`): its first request is the base
task's, with the tools offered; each reply that calls tools is followed by one `Role.TOOL`
request per call, answered by the shell's tool backend through the same cached `llm.complete`
(so a replay runs no tool); once every result is in, the next model request carries the whole
conversation. The episode ends at a reply that calls no tool (its text is the answer the base
task scores) or after `max_turns` model calls. Everything here is pure: the same replies give
the same requests, and the walk over the replies rebuilds the conversation each time.

A call of a tool the toolbox does not have is answered here, as an error result, without a
request; arguments that do not validate are answered by the tool backend the same way: neither
is a crash, both are shown to the model and, in the trajectory, to the optimizer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import attrs
from attrs import field, frozen

from llm_cache.records import (
    CallKind,
    Message,
    Request,
    Response,
    Role,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from stratune_core.records.base import Sample, Score, TaskInfo
from stratune_core.records.ids import text_id
from stratune_core.records.task import Task

DEFAULT_MAX_TURNS = 8
MAX_TURNS = 24  # each turn is two waves of calls (the model's, then its tools'), within 64
TRAJECTORY_CHARS = 1600  # an episode as the optimizer sees it
_CALL_CHARS, _RESULT_CHARS, _TEXT_CHARS = 160, 200, 240
TOOL_PREFIX = "tool:"


@frozen(kw_only=True)
class Toolbox:
    """The tools a task declares, each with a fingerprint of its definition (a changed tool is
    another cache entry), and the turn limit of an episode."""

    tools: tuple[ToolSpec, ...] = field(converter=tuple)
    fingerprints: tuple[tuple[str, str], ...] = field(default=(), converter=tuple)
    max_turns: int = DEFAULT_MAX_TURNS

    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tools)

    def model_of(self, name: str) -> str:
        """`Request.model` of a call of `name`: the tool and its fingerprint."""
        return f"{TOOL_PREFIX}{name}@{dict(self.fingerprints).get(name, '')}"


def tool_name(model: str) -> str:
    """The tool a `Role.TOOL` request calls (`Toolbox.model_of` read back)."""
    return model.removeprefix(TOOL_PREFIX).rpartition("@")[0]


@frozen(kw_only=True)
class Turn:
    """One model reply and the results of the calls it made (in call order); `missing` calls
    still wait for their tool's answer."""

    reply: Response
    results: tuple[ToolResultBlock, ...] = field(default=(), converter=tuple)
    missing: tuple[ToolUseBlock, ...] = field(default=(), converter=tuple)


def unknown_tool(call: ToolUseBlock, toolbox: Toolbox) -> ToolResultBlock:
    names = ", ".join(toolbox.names()) or "none"
    return ToolResultBlock(tool_use_id=call.id, is_error=True,
                           content=f"error: there is no tool {call.name!r}; the tools are: {names}")


def walk(toolbox: Toolbox, responses: Sequence[Response]) -> tuple[Turn, ...]:
    """The episode so far, from every reply in the order sent: model replies, each followed by
    its known tools' answers. The last turn's calls are not run when it is the last allowed."""
    turns: list[Turn] = []
    i = 0
    while i < len(responses):
        reply = responses[i]
        i += 1
        last_allowed = len(turns) + 1 >= toolbox.max_turns
        results: list[ToolResultBlock] = []
        missing: list[ToolUseBlock] = []
        for call in () if last_allowed else reply.tool_calls:
            if call.name not in toolbox.names():
                results.append(unknown_tool(call, toolbox))
            elif i < len(responses) and not missing:
                answer = responses[i]
                i += 1
                results.append(ToolResultBlock(tool_use_id=call.id, content=answer.text,
                                               is_error=answer.stop_reason == "tool_error"))
            else:
                missing.append(call)
        turns.append(Turn(reply=reply, results=results, missing=missing))
    return tuple(turns)


def _assistant(reply: Response) -> Message:
    blocks: list[TextBlock | ToolUseBlock] = []
    if reply.text.strip():
        blocks.append(TextBlock(text=reply.text))
    blocks.extend(reply.tool_calls)
    return Message(role="assistant", content=tuple(blocks))


def episode_key(skill: str, sample: Sample) -> str:
    """Which episode a tool call belongs to (its request's `system`): the tool backend keeps an
    episode's time limit by it."""
    return f"episode {text_id(skill)} {sample.id}"


@frozen(kw_only=True)
class AgentTask:
    """A single-request task run as episodes with `toolbox`'s tools."""

    base: Task
    toolbox: Toolbox

    @property
    def info(self) -> TaskInfo:
        return attrs.evolve(self.base.info, tools=self.toolbox.tools,
                            output_chars=TRAJECTORY_CHARS)

    def split(self, name: str) -> tuple[Sample, ...]:
        return self.base.split(name)

    def describe(self, sample: Sample) -> str:
        return self.base.describe(sample)

    def expected(self, sample: Sample) -> str:
        return self.base.expected(sample)

    def _first(self, skill: str, sample: Sample, model: str) -> Request:
        requests = self.base.requests(skill, sample, model)
        if len(requests) != 1:
            raise ValueError(f"sample {sample.id}: an agent episode starts from one request, "
                             f"the task makes {len(requests)}")
        return attrs.evolve(requests[0], tools=self.toolbox.tools)

    def requests(self, skill: str, sample: Sample, model: str) -> tuple[Request, ...]:
        return (self._first(skill, sample, model),)

    def follow_ups(self, skill: str, sample: Sample, model: str,
                   responses: tuple[Response, ...]) -> tuple[Request, ...]:
        turns = walk(self.toolbox, responses)
        last = turns[-1]
        if last.missing:
            key = episode_key(skill, sample)
            return tuple(Request(role=Role.TOOL, model=self.toolbox.model_of(c.name), system=key,
                                 messages=(Message.user(c.input),), max_tokens=1,
                                 kind=CallKind.TOOL_CALL) for c in last.missing)
        if not last.results or len(turns) >= self.toolbox.max_turns:
            return ()  # an answer, or the last turn allowed
        first = self._first(skill, sample, model)
        messages = list(first.messages)
        for turn in turns:
            messages.append(_assistant(turn.reply))
            messages.append(Message(role="user", content=turn.results))
        return (attrs.evolve(first, messages=tuple(messages)),)

    def score(self, sample: Sample, responses: tuple[Response, ...]) -> Score:
        turns = walk(self.toolbox, responses)
        final = turns[-1].reply if turns else Response(text="")
        ended = bool(final.tool_calls) and not turns[-1].results
        answer = "" if ended else final.text
        scored = self.base.score(sample, (attrs.evolve(final, text=answer, tool_calls=()),))
        summary = scored.summary
        if ended:
            summary = (f"reached the limit of {self.toolbox.max_turns} model turns still "
                       f"calling tools, without a final answer; {summary}").rstrip("; ")
        return attrs.evolve(scored, output=render(turns, answer, ended), summary=summary)


def _args(call: ToolUseBlock) -> str:
    try:
        data = json.loads(call.input)
    except ValueError:
        return call.input
    if not isinstance(data, dict):
        return call.input
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in data.items())


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render(turns: Sequence[Turn], answer: str, ended: bool,
           limit: int = TRAJECTORY_CHARS) -> str:
    """The episode compacted for feedback: each turn's text, each call with its arguments and
    result (errors marked), and the answer; over `limit`, the middle calls are left out first."""
    lines: list[str] = []
    for number, turn in enumerate(turns, 1):
        said = turn.reply.text.strip()
        if said and (turn.reply.tool_calls or number < len(turns)):
            lines.append(f"turn {number} said: {_short(said, _TEXT_CHARS)}")
        results = {r.tool_use_id: r for r in turn.results}
        for call in turn.reply.tool_calls:
            head = f"turn {number} called {call.name}({_short(_args(call), _CALL_CHARS)})"
            result = results.get(call.id)
            if result is None:
                lines.append(f"{head} (not run: the turn limit)")
            else:
                mark = "ERROR " if result.is_error else ""
                lines.append(f"{head} -> {mark}{_short(result.content, _RESULT_CHARS)}")
    end = ("no final answer (the turn limit)" if ended
           else f"final answer: {_short(answer, _TEXT_CHARS) or '(empty)'}")
    lines.append(end)
    dropped, middle = 0, len(lines) // 2
    while len("\n".join(lines)) > limit and len(lines) > 2:
        middle = len(lines) // 2
        del lines[middle]
        dropped += 1
    if dropped:
        lines.insert(middle, f"… ({dropped} lines left out)")
    return "\n".join(lines)
