"""`--timeout` ends the process even when the run is stuck where no stop check runs (a user
scorer that blocks, a call that never returns): a watchdog interrupts the main thread a grace
period after the deadline, as Ctrl-C would, so events are flushed and the run resumes with
the same command."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

GRACE_SECONDS = 30.0  # the soft stop (round boundaries, before each paid call) goes first


class Watchdog:
    def __init__(self) -> None:
        self.fired: str | None = None

    @contextlib.contextmanager
    def armed(self, seconds: float | None, text: str) -> Iterator[None]:
        """Interrupt the main thread `seconds` + GRACE_SECONDS from now (None: never)."""
        if seconds is None or threading.current_thread() is not threading.main_thread():
            yield
            return

        main = threading.main_thread().ident
        assert main is not None

        def fire() -> None:
            self.fired = (f"--timeout {text} reached and the run did not stop at a round or a "
                          "call (a scorer or a call that does not return?); stopped; run the "
                          "same command to resume")
            # a real signal: it also ends a blocking system call (sleep, read), which
            # _thread.interrupt_main() would not
            signal.pthread_kill(main, signal.SIGINT)

        # A job started in the background by a non-interactive shell inherits SIGINT ignored:
        # the watchdog's interrupt would then be lost and a blocked run never end.
        previous = signal.getsignal(signal.SIGINT)
        if previous is signal.SIG_IGN:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        timer = threading.Timer(seconds + GRACE_SECONDS, fire)
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()
            if previous is signal.SIG_IGN:
                signal.signal(signal.SIGINT, previous)
