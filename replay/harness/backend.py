"""The `claude-code:MODEL` target: one request of a harness task (`task.py`) is one episode of
the real Claude Code CLI (`episode.py`), every API call of which goes through the local proxy
(`proxy.py`) and StraTune's cache, keyed by the normalized body (`normalize.py`).

The episode's reply is its final message, its transcript and the reason it failed, if it did;
its usage is the sum of its API calls', so the run's budget, tokens and cost count it as one
execution of the model. A strict replay runs each episode again against the proxy with the
cache read-only: every API call of it must be a recorded one, and its reply must equal the
recorded reply (`recheck`). An episode that ran into its wall-clock limit is not run again (the
limit is the machine's, not the episode's): its recorded failure stands.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from llm_cache.backends.base import BackendBase
from llm_cache.client import CachedLLM
from llm_cache.errors import LLMFatalError
from llm_cache.key import request_key
from llm_cache.modes import Mode
from llm_cache.reader import CacheReader
from llm_cache.records import Request, Response, Role, Usage
from llm_cache.retry import RetryDecision
from llm_cache.store import CacheStore
from replay.harness.cli import cli_path
from replay.harness.episode import EpisodeSpec, run_episode, session_id
from replay.harness.proxy import Proxy
from replay.harness.transcript import render
from replay.harness.upstream import Upstream

HARNESS_ERROR = "harness_error"
WALL_CLOCK = "wall-clock limit"


class ClaudeCodeBackend(BackendBase):
    def __init__(self, model: str, *, seconds: float = 300.0, sandbox: bool,
                 api_key: str | None = None, base_url: str | None = None) -> None:
        self.name = f"claude-code:{model}"
        self.model = model
        self.seconds = seconds
        self.sandbox = sandbox
        self.concurrency = 2  # each episode is a node process of ~220 MB
        self.accepts_temperature = False
        self._upstream = Upstream(api_key=api_key, base_url=base_url)
        self._proxy: Proxy | None = None
        self._llm: CachedLLM | None = None
        self._socket_dir: Path | None = None

    def bind_cache(self, directory: Path | None, mode: Mode) -> None:
        """The harness's API calls go into the run's own cache, read-only in replay."""
        if directory is None:
            raise LLMFatalError("claude-code targets need a cache directory for their calls")
        store: CacheStore | CacheReader = (CacheReader(directory) if mode is Mode.REPLAY
                                           else CacheStore(directory))
        self._llm = CachedLLM(store, {Role.TARGET: self._upstream}, mode=mode)
        self._socket_dir = Path(tempfile.mkdtemp(prefix="stratune-proxy-"))
        self._socket_dir.chmod(0o755)
        self._proxy = Proxy(self._llm, self._upstream, mode=mode,
                            socket=self._socket_dir / "proxy.sock" if self.sandbox else None)

    def _episode(self, request: Request) -> Response:
        if self._proxy is None:
            raise LLMFatalError("claude-code target used outside a cached client")
        setup = json.loads(request.system)
        sid = session_id(request_key(request))
        spec = EpisodeSpec(cli=str(cli_path()), model=self.model, skill=setup["skill"],
                           files=setup["files"], prompt=request.user_text(),
                           tools=tuple(setup["tools"]), max_turns=int(setup["max_turns"]),
                           seconds=self.seconds, session_id=sid, sandboxed=self.sandbox)
        proxy = self._proxy
        try:
            run, _ = run_episode(spec, proxy_url=proxy.url, socket=self._socket_dir and
                                 self._socket_dir / "proxy.sock",
                                 on_start=lambda paths: proxy.open_session(sid, paths))
        finally:
            session = proxy.close_session(sid) if sid in proxy.sessions else None
        if session is not None and session.error is not None:
            raise session.error  # a strict replay's miss, an upstream failure: not the episode's
        result = next((m for m in reversed(run.messages) if m.get("type") == "result"), {})
        error = self._failure(run, result, spec)
        answer = "" if error else str(result.get("result", ""))
        reply = {"result": answer, "error": error, "turns": result.get("num_turns", 0),
                 "transcript": render(run.messages, spec.skill, answer, error)}
        return Response(text=json.dumps(reply, sort_keys=True, ensure_ascii=False),
                        stop_reason=HARNESS_ERROR if error else "end_turn", model=self.model,
                        usage=session.usage if session is not None else Usage())

    def _failure(self, run: Any, result: dict[str, Any], spec: EpisodeSpec) -> str:
        if run.returncode is None:
            return f"exceeded the episode's {WALL_CLOCK} of {spec.seconds:g} s"
        subtype = str(result.get("subtype", ""))
        if subtype == "error_max_turns":
            return f"reached --max-turns {spec.max_turns} before a final answer"
        if not result:
            tail = " ".join(run.stderr.split())[-200:]
            return f"the CLI ended (exit {run.returncode}) without a result: {tail}"
        if result.get("is_error") or subtype != "success":
            return f"the CLI reported {subtype or 'an error'}: {str(result.get('result'))[:200]}"
        return ""

    async def acomplete(self, request: Request) -> Response:
        return await asyncio.to_thread(self._episode, request)

    def rechecks(self, request: Request) -> bool:
        return True

    async def recheck(self, request: Request, recorded: Response) -> Response | None:
        """The episode run again (None: not, for a recorded wall-clock failure)."""
        if recorded.stop_reason == HARNESS_ERROR and WALL_CLOCK in recorded.text:
            return None
        return await self.acomplete(request)

    def classify(self, exc: BaseException) -> RetryDecision:
        return RetryDecision.no(f"{type(exc).__name__}: {exc}")

    async def aclose(self) -> None:
        if self._proxy is not None:
            self._proxy.close()
            self._proxy = None
        if self._llm is not None:
            self._llm.close()
            self._llm = None
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
