"""The fake Messages API's HTTP side (`fake_server`): routing of the API, Bedrock and batch
paths, the request log's entries, and latency and faults played on the wire (a reset, a stall,
a canned error, a truncated body)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

import attrs

from llm_cache.testing.fake_batches import PREFIX as BATCHES
from llm_cache.testing.fake_replies import (
    Fault,
    Reply,
    api_error,
    fault_reply,
    proxy_unauthorized,
    reject,
)


@attrs.frozen(kw_only=True)
class LoggedRequest:
    index: int
    method: str
    path: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]
    fault: Fault | None



class HttpServer(ThreadingHTTPServer):
    # The stdlib's backlog of 5 drops SYNs when a client opens 32 connections at once, and each
    # drop costs a 1 s retransmit: the real API has no such limit, so neither may its stand-in.
    request_queue_size = 128


class MessagesHandler(BaseHTTPRequestHandler):
    # the FakeAnthropicServer this handler class is made for (its module imports this one)
    fake: Any
    protocol_version = "HTTP/1.1"
    # Responses go out in two writes; with Nagle on, each waits out a 40 ms delayed ACK.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        return None  # keep test output clean

    def do_POST(self) -> None:  # stdlib handler naming
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?", 1)[0]
        if path.startswith(BATCHES):
            self._serve("POST", path, body, lambda: self.fake.batches.post(path, body))
            return
        if path in ("/v1/messages", "/anthropic/v1/messages"):  # the API; Bedrock Mantle
            route, model = "api", str(body.get("model", ""))
        elif path.startswith("/model/") and path.endswith("/invoke"):
            route, model = "invoke", unquote(path[len("/model/"): -len("/invoke")])
        else:
            self._reply(api_error(404, "not_found_error", f"no route {path}"))
            return
        entry = self._admitted("POST", path, body)
        if entry is None:
            return
        refused = reject(route, model, body)
        if refused is not None:
            self._reply(refused)
            return
        payload = json.dumps(self.fake.message(entry, model)).encode()
        if entry.fault is Fault.TRUNCATED_JSON:
            payload = payload[: len(payload) // 2]
        self._send(200, payload, {"request-id": f"req_fake_{entry.index}"})

    def do_GET(self) -> None:  # stdlib handler naming
        path = self.path.split("?", 1)[0]
        if not path.startswith(BATCHES + "/"):
            self._reply(api_error(404, "not_found_error", f"no route {path}"))
            return
        self._serve("GET", path, {}, lambda: self.fake.batches.get(path))

    def _serve(self, method: str, path: str, body: Mapping[str, Any],
               answer: Callable[[], Reply]) -> None:
        entry = self._admitted(method, path, body)
        if entry is not None:
            reply = answer()
            if entry.fault is Fault.TRUNCATED_JSON:
                reply = attrs.evolve(reply, body=reply.body[: len(reply.body) // 2])
            self._reply(reply)

    def _admitted(self, method: str, path: str, body: Mapping[str, Any]) -> LoggedRequest | None:
        """Log the request and play its latency and fault; None when that answered it."""
        headers = {k.lower(): v for k, v in self.headers.items()}
        entry = self.fake._admit(method, path, headers, body)
        if self.fake.latency:
            time.sleep(self.fake.latency)
        wanted = self.fake.proxy_auth_header
        if wanted is not None and wanted.lower() not in headers:
            self._reply(proxy_unauthorized())
            return None
        fault = entry.fault
        if fault is Fault.CONNECTION_RESET:
            self.close_connection = True
            self.connection.close()
            return None
        if fault is Fault.STALL:
            time.sleep(self.fake.stall_seconds)
            self.close_connection = True
            return None
        canned = None if fault is None else fault_reply(fault, self.fake.fault_headers.get(fault))
        if canned is not None:
            self._reply(canned)
            return None
        return entry

    def _reply(self, reply: Reply) -> None:
        self._send(reply.status, reply.body, reply.headers, reply.content_type)

    def _send(self, status: int, payload: bytes, headers: Mapping[str, str],
              content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(payload)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)
