"""Tracking off the run's path: a bounded queue drained by one background thread, and MLflow's
HTTP client held to short timeouts and few retries.

MLflow's own defaults (a 120 s timeout, 7 retries with exponential backoff) let a dead tracking
server hold a paid run for minutes. Here a round's metrics are handed to the queue and the run
goes on at once; a full queue drops the newest job (counted, and reported once); at the end of
the run the queue gets a bounded wait, after which whatever is left is abandoned.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable

# MLflow reads these on every request; a user's own settings win.
HTTP_LIMITS = {
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "5",
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
    "MLFLOW_HTTP_REQUEST_BACKOFF_JITTER": "0.5",
}
QUEUE_SIZE = 256
FINISH_WAIT_S = 30.0


def bound_mlflow_http() -> None:
    for name, value in HTTP_LIMITS.items():
        os.environ.setdefault(name, value)


Job = Callable[[], None]


class TrackingQueue:
    """Jobs run in order on one daemon thread; `submit` never blocks."""

    def __init__(self, size: int = QUEUE_SIZE) -> None:
        self._jobs: queue.Queue[Job | None] = queue.Queue(maxsize=size)
        self.dropped = 0
        self._thread = threading.Thread(target=self._work, name="stratune-tracking", daemon=True)
        self._thread.start()

    def submit(self, job: Job) -> bool:
        try:
            self._jobs.put_nowait(job)
        except queue.Full:
            self.dropped += 1
            return False
        return True

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                if job is None:
                    return
                job()  # jobs report their own errors
            finally:
                self._jobs.task_done()

    def close(self, wait_s: float = FINISH_WAIT_S) -> bool:
        """Stop after the jobs already queued, waiting at most `wait_s`; True if all ran."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                self._jobs.put(None, timeout=max(0.0, deadline - time.monotonic()))
                break
            except queue.Full:
                if time.monotonic() >= deadline:
                    return False
        self._thread.join(max(0.0, deadline - time.monotonic()))
        return not self._thread.is_alive()
