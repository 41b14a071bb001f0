"""`stratune serve DIR [--port P] [--host H]`: the dashboard of a run or grid, live.

A standard-library HTTP server: `/` is the page (the same document `view --html` writes, told
where to ask for updates), `/data?since=N` the sections changed since generation N. Every
other path is a 404 and every method but GET and HEAD a 405: nothing can be written through
it, and it writes nothing into the directory. It listens on 127.0.0.1 unless `--host` says
otherwise, and then says so."""

from __future__ import annotations

import errno
import ipaddress
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from replay.dashboard.live_source import LiveSource
from replay.dashboard.page import document
from replay.dashboard.source import kind_of
from stratune_core.records.errors import StraTuneError

DEFAULT_HOST = "127.0.0.1"
INTERVAL_S = 1.0


class _Handler(BaseHTTPRequestHandler):
    server: DashboardServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (the base's name)
        pass  # a line per poll would bury the lines that matter

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802  (http.server's name)
        url = urlsplit(self.path)
        source = self.server.source
        if url.path == "/":
            state = source.snapshot(None)
            live = {"endpoint": "/data", "generation": state["generation"],
                    "interval_ms": int(INTERVAL_S * 1000)}
            page = document(state["kind"], state["title"], state["sections"], live=live)
            self._send(200, page.encode("utf-8"), "text/html; charset=utf-8")
        elif url.path == "/data":
            since = parse_qs(url.query).get("since", [""])[0]
            state = source.snapshot(int(since) if since.isdigit() else None)
            self._send(200, json.dumps(state, ensure_ascii=False).encode("utf-8"),
                       "application/json; charset=utf-8")
        else:
            self._send(404, b"not found\n", "text/plain; charset=utf-8")

    do_HEAD = do_GET  # noqa: N815

    def _refuse(self) -> None:
        self._send(405, b"read-only\n", "text/plain; charset=utf-8")

    do_POST = do_PUT = do_DELETE = do_PATCH = _refuse  # noqa: N815


class DashboardServer(ThreadingHTTPServer):
    daemon_threads = True  # a page left open never keeps the command from ending

    def __init__(self, address: tuple[str, int], source: LiveSource) -> None:
        self.source = source
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):  # a page closed mid-reply
            super().handle_error(request, client_address)


def loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def open_server(path: Path, host: str, port: int, say: Callable[[str], None]) -> DashboardServer:
    """The server, listening; one-line errors for a directory that holds neither a run nor a
    grid and for an address it cannot listen on."""
    kind_of(path)  # refuses a file or a directory of something else, before listening
    source = LiveSource(path, say)
    try:
        server = DashboardServer((host, port), source)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise StraTuneError(f"--port {port}: already in use on {host}; choose another "
                                "port (--port 0 picks a free one)") from None
        raise StraTuneError(f"--host {host} --port {port}: cannot listen there "
                            f"({exc.strerror or exc}); check the address") from None
    return server


def watch(server: DashboardServer, stop: threading.Event) -> None:
    """Look at the directory every second, so that the terminal says when its state changes
    even with no page open (and a page's request finds the sections ready)."""
    while not stop.wait(INTERVAL_S):
        server.source.refresh()


def serve(path: Path, host: str, port: int, say: Callable[[str], None],
          explicit_host: bool = False) -> int:
    server = open_server(path, host, port, say)
    bound_host, bound_port = server.server_address[:2]
    stop = threading.Event()
    try:  # from here on Ctrl-C (or SIGTERM) ends it cleanly, wherever it lands
        say(f"serving {path} at http://{bound_host}:{bound_port}/ (read-only; Ctrl-C stops)")
        if explicit_host and not loopback(host):
            say(f"--host {host}: listening beyond this machine; anyone who can reach "
                f"{bound_host}:{bound_port} can read this run (its skills, replies and inputs)")
        server.source.refresh()
        threading.Thread(target=watch, args=(server, stop), daemon=True).start()
        server.serve_forever(poll_interval=0.25)
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        server.server_close()
        server.source.close()
    say("serve: stopped")
    return 0
