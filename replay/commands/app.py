"""The `stratune` command line: train, plan, evaluate, replay, view, demo, cache, grid,
compare. `main` parses (`replay/commands/parser.py`), runs the command's handler
(`replay/commands/handlers.py`) and turns an error a user can act on into one line, exit 2."""

from __future__ import annotations

import logging
import signal
import sqlite3
import sys
import threading
from collections.abc import Sequence

from rich.console import Console
from rich.logging import RichHandler

from replay.commands.error_lines import error_line
from replay.commands.handlers import EXIT_STOPPED, WATCHDOG
from replay.commands.parser import EXIT_BAD_INPUT, build_parser
from replay.commands.widths import console_width
from replay.input_files import too_deep
from replay.models.extensions import Extensions, using
from replay.models.redact import scrub
from stratune_core.records.errors import StraTuneError

__all__ = ["build_parser", "main"]


def _terminate(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def _stop_on_sigterm() -> None:
    """`kill`, a job scheduler's time limit or `docker stop` end a run as Ctrl-C does: events
    flushed, cache closed, resumable with the same command."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)


def main(argv: Sequence[str] | None = None, *,
         extensions: Extensions | None = None) -> int:
    """Run one command. `extensions` adds model kinds and tasks for this call (see
    `replay.models.specs`); the test suite injects its scripted models and toy task this way."""
    _tolerant_streams()
    with using(extensions or Extensions()):
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as exc:  # --help, or a usage error already printed in one line
            return exc.code if isinstance(exc.code, int) else EXIT_BAD_INPUT
        _stop_on_sigterm()
        console = Console(width=console_width())
        # The model layer's retry lines ("retry 1/6 in 2.0 s: ...") print above the progress bar.
        model_log = RichHandler(console=console, show_time=False, show_level=False,
                                show_path=False)
        logging.getLogger("llm_cache").addHandler(model_log)
        # ... and so do the Batch API's progress lines (INFO on llm_cache.batch).
        batch_log = logging.getLogger("llm_cache.batch")
        batch_level = batch_log.level
        batch_log.setLevel(logging.INFO)
        try:
            if args.command == "cache":
                return int(args.func(args))
            return int(args.func(args, console))
        except (StraTuneError, OSError, sqlite3.DatabaseError) as exc:
            return _bad_input(error_line(exc) or str(exc))
        except RecursionError:  # a file nested deeper than a parser recurses, read elsewhere
            return _bad_input(str(too_deep("input")))
        except KeyboardInterrupt:
            if WATCHDOG.fired is not None:
                print(f"error: {WATCHDOG.fired}", file=sys.stderr)
                WATCHDOG.fired = None
                return EXIT_STOPPED
            print("interrupted", file=sys.stderr)
            return 130
        finally:
            logging.getLogger("llm_cache").removeHandler(model_log)
            batch_log.setLevel(batch_level)


def _tolerant_streams() -> None:
    """On a terminal that is not UTF-8 (LC_ALL=C, PYTHONIOENCODING=ascii), a character the
    terminal cannot show (in --help, a path, a message) is written escaped, not a traceback."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        reconfigure = getattr(stream, "reconfigure", None)
        if encoding != "utf8" and reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _bad_input(message: str) -> int:
    text = " ".join(scrub(message).split())  # one line, whatever the message held
    print(f"error: {text}", file=sys.stderr)
    return EXIT_BAD_INPUT


if __name__ == "__main__":
    raise SystemExit(main())
