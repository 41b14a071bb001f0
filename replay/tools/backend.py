"""The backend that answers an agent episode's tool calls (`Role.TOOL` requests) through the
cached client: a tool's result is stored under its request's key like a model's reply, so a
rerun or a replay runs no tool. A request names the tool and its fingerprint (`model`), the
episode (`system`) and the arguments (the user message, canonical JSON).

Limits: each call has `call_seconds`, each episode `episode_seconds` of tool time in all
(counted in this process: a resumed run starts its episodes' counts again); a call past the
episode's limit, an unknown tool, bad JSON, a bad argument, an exception, a hang and an
oversized result are all error results (`stop_reason` "tool_error"), shown to the model.

A tool declared pure is recomputed on replay and its result compared with the recorded one
(`rechecks`); the others are trusted to the cache.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Mapping, Sequence

from llm_cache.backends.base import BackendBase
from llm_cache.records import Request, Response
from llm_cache.retry import RetryDecision
from replay.tools.declared import DeclaredTool
from replay.tools.execution import ToolOutcome, run_call
from stratune_core.tasks.agent import tool_name

CALL_SECONDS = 30.0
EPISODE_SECONDS = 120.0
RESULT, ERROR = "tool_result", "tool_error"


class ToolBackend(BackendBase):
    def __init__(self, tools: Sequence[DeclaredTool], *, call_seconds: float = CALL_SECONDS,
                 episode_seconds: float = EPISODE_SECONDS, concurrency: int = 2) -> None:
        self.tools: Mapping[str, DeclaredTool] = {t.name: t for t in tools}
        self.call_seconds = call_seconds
        self.episode_seconds = episode_seconds
        self.name = "tools"
        self.concurrency = concurrency
        self._used: dict[str, float] = {}
        self._lock = threading.Lock()

    def _remaining(self, episode: str) -> float:
        with self._lock:
            return self.episode_seconds - self._used.get(episode, 0.0)

    def _spend(self, episode: str, seconds: float) -> None:
        with self._lock:
            self._used[episode] = self._used.get(episode, 0.0) + seconds

    def run(self, request: Request) -> ToolOutcome:
        name = tool_name(request.model)
        tool = self.tools.get(name)
        if tool is None:
            return ToolOutcome(text=f"error: there is no tool {name!r}", error=True)
        try:
            arguments = json.loads(request.user_text())
        except ValueError:
            return ToolOutcome(text=f"error: the arguments of {name} are not JSON", error=True)
        if not isinstance(arguments, dict):
            return ToolOutcome(text=f"error: the arguments of {name} must be a JSON object",
                               error=True)
        left = self._remaining(request.system)
        if left <= 0:
            return ToolOutcome(text=f"error: this episode's tool time ({self.episode_seconds:g}"
                                    " s) is spent; answer with what you have", error=True)
        seconds = min(self.call_seconds, left)
        start = time.monotonic()
        try:
            if tool.isolated:  # the sandbox runs it in a process of its own, with its limits
                found = tool.call(arguments)
                outcome = found if isinstance(found, ToolOutcome) else ToolOutcome(text=str(found))
            else:
                outcome = run_call(tool.call, arguments, name=name, seconds=seconds)
        finally:
            self._spend(request.system, time.monotonic() - start)
        return outcome

    async def acomplete(self, request: Request) -> Response:
        outcome = await asyncio.to_thread(self.run, request)
        return Response(text=outcome.text, stop_reason=ERROR if outcome.error else RESULT,
                        model=request.model)

    def rechecks(self, request: Request) -> bool:
        tool = self.tools.get(tool_name(request.model))
        return tool is not None and tool.pure

    def classify(self, exc: BaseException) -> RetryDecision:
        return RetryDecision.no(f"{type(exc).__name__}: {exc}")

    async def aclose(self) -> None:
        return None
