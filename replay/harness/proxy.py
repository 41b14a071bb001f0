"""The local proxy a harness episode talks to: the CLI's `ANTHROPIC_BASE_URL`. It listens on
127.0.0.1 (and, for a sandboxed episode without network, on a Unix socket the sandbox's
forwarder reaches), turns each `POST /v1/messages` into a request of StraTune's cache keyed by
the normalized body (`normalize.py`), sends the original body upstream on a miss, and answers
the CLI as the API would: a stream of events when it asked for one, the message otherwise.

Episodes are told apart by their pinned session id (the `X-Claude-Code-Session-Id` header):
each has its own directories to normalize, its own tally of usage, and the first error the
cache gave it (a strict replay's miss), which the episode reports instead of the CLI's failure.
"""

from __future__ import annotations

import json
import socketserver
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from attrs import define, field

from llm_cache.key import canonical_json
from llm_cache.modes import Mode
from llm_cache.records import CallKind, Message, Request, Role, Usage
from replay.harness.normalize import normalized
from replay.harness.sse import stream
from replay.harness.upstream import Upstream

SESSION_HEADER = "x-claude-code-session-id"


@define
class Session:
    paths: Mapping[str, str]
    usage: Usage = Usage()
    calls: int = 0
    error: BaseException | None = None
    requests: list[str] = field(factory=list)  # the normalized bodies, in order


class Proxy:
    """Owns the HTTP (and Unix socket) servers; `llm` is the cached client over `upstream`."""

    def __init__(self, llm: Any, upstream: Upstream, *, mode: Mode, socket: Path | None = None
                 ) -> None:
        self.llm, self.upstream, self.mode = llm, upstream, mode
        self.sessions: dict[str, Session] = {}
        self._lock = threading.Lock()
        self._serial = threading.Lock()  # a strict replay reads the cache one call at a time
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                return None

            def do_HEAD(self) -> None:  # a reachability probe
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self._reply(404, b'{"type":"error","error":{"type":"not_found_error"}}')

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
                    self._reply(404, b'{"type":"error","error":{"type":"not_found_error"}}')
                    return
                status, payload, streamed = outer.answer(body, headers)
                self._reply(status, payload, "text/event-stream" if streamed else None)

            def _reply(self, status: int, payload: bytes, kind: str | None = None) -> None:
                self.send_response(status)
                self.send_header("content-type", kind or "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._servers: list[socketserver.BaseServer] = [self._http]
        if socket is not None:
            unix = socketserver.ThreadingUnixStreamServer(str(socket), Handler)
            unix.daemon_threads = True
            self._servers.append(unix)
            socket.chmod(0o777)  # the sandboxed CLI runs as another user
        self._http.daemon_threads = True
        for server in self._servers:
            threading.Thread(target=server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    def open_session(self, session_id: str, paths: Mapping[str, str]) -> Session:
        with self._lock:
            self.sessions[session_id] = found = Session(paths=dict(paths))
        return found

    def close_session(self, session_id: str) -> Session:
        with self._lock:
            return self.sessions.pop(session_id)

    def answer(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, bytes, bool]:
        session = self.sessions.get(headers.get(SESSION_HEADER, ""))
        if session is None:
            return 400, b'{"type":"error","error":{"type":"invalid_request_error",' \
                        b'"message":"not an episode of this run"}}', False
        key = canonical_json(normalized(body, session.paths))
        request = Request(role=Role.TARGET, model=str(body.get("model", "")), system="",
                          messages=(Message.user(key),),
                          max_tokens=max(1, int(body.get("max_tokens") or 1)),
                          kind=CallKind.TARGET_EXECUTION)
        self.upstream.expect(request, body, headers)
        try:
            if self.mode is Mode.REPLAY:
                with self._serial:
                    (reply,) = self.llm.complete([request])
            else:
                (reply,) = self.llm.complete([request])
        except Exception as exc:  # noqa: BLE001 (told to the episode, answered as an API error)
            session.error = session.error or exc
            message = json.dumps({"type": "error", "error": {"type": "invalid_request_error",
                                                             "message": str(exc)[:300]}})
            return 400, message.encode(), False  # never retried by the CLI
        with self._lock:
            session.usage = session.usage + reply.usage
            session.calls += 1
            session.requests.append(key)
        message = json.loads(reply.text)
        if body.get("stream"):
            return 200, stream(message), True
        return 200, json.dumps(message).encode(), False

    def close(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()
