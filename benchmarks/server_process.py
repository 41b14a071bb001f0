"""The fake Messages API server in a child process, optionally capped like a real endpoint.

A benchmark that runs the server in its own process measures only the client's CPU and its
turns on the GIL: the real API does not run in our process. `CappedServer` answers 429
(retry-after 0) to a request arriving while `cap` are in flight.
"""

from __future__ import annotations

import multiprocessing as mp
import threading
from typing import Any

import attrs

from benchmarks.common import ToyResponder, cpu_seconds
from llm_cache.testing.fake_server import FakeAnthropicServer, Fault


class CappedServer(FakeAnthropicServer):
    """The fake server; past `cap` requests in flight (None: no cap) it answers 429."""

    def __init__(self, *, cap: int | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cap, self.in_flight, self.peak, self.rejected, self.answered = cap, 0, 0, 0, 0
        self._cap_lock = threading.Lock()

    def _admit(self, method: str, path: str, headers: Any, body: Any) -> Any:
        entry = super()._admit(method, path, headers, body)
        with self._cap_lock:
            if self.cap is not None and self.in_flight >= self.cap:
                self.rejected += 1
                return attrs.evolve(entry, fault=Fault.RATE_LIMIT)
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        return entry

    def message(self, entry: Any, model: str) -> dict[str, Any]:
        try:
            return super().message(entry, model)
        finally:
            with self._cap_lock:
                self.in_flight -= 1
                self.answered += 1


def _serve(cap: int | None, latency: float, pipe: Any) -> None:
    with CappedServer(cap=cap, responder=ToyResponder(), latency=latency) as server:
        pipe.send(server.url)
        while (command := pipe.recv()) != "stop":
            if command == "stats":
                pipe.send({"answered": server.answered, "rejected": server.rejected,
                           "peak": server.peak, "received": len(server.requests),
                           "cpu_s": cpu_seconds()})


class ServerProcess:
    """`CappedServer` answering with the toy models in a spawned child process."""

    def __init__(self, cap: int | None, latency: float) -> None:
        self.pipe, child = mp.Pipe()
        self.process = mp.get_context("spawn").Process(target=_serve, args=(cap, latency, child),
                                                       daemon=True)
        self.process.start()
        self.url: str = self.pipe.recv()

    def stats(self) -> dict[str, Any]:
        """Requests answered, refused (429), received, the peak in flight and the CPU so far."""
        self.pipe.send("stats")
        return self.pipe.recv()

    def close(self) -> None:
        self.pipe.send("stop")
        self.process.join(10)

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
