"""What a Python API call shows and how it fails: the command's live display on a terminal
and nothing elsewhere; the command's one-line errors raised as `StraTuneError`."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console

from llm_cache.errors import SpecError
from replay.api.results import ModelCallFailed, RunStopped
from replay.commands.error_lines import error_line
from replay.commands.widths import console_width
from replay.models.redact import scrub
from replay.run import runner
from stratune_core.records.errors import ConfigError, StraTuneError


def console_for(progress: bool | None) -> Console:
    """On a terminal (or with progress=True): the command's live display. Elsewhere: nothing
    printed; the output is kept to quote in an error."""
    shown = Console().is_terminal if progress is None else progress
    # soft_wrap: each message stays one recorded line (the terminal wraps it for the eye)
    if shown:
        return Console(record=True, soft_wrap=True, width=console_width())
    return Console(record=True, file=io.StringIO(), width=10_000, soft_wrap=True)


@contextmanager
def raised_as_errors() -> Iterator[None]:
    """Errors the command prints as one line are raised as `StraTuneError` with that line."""
    try:
        yield
    except SpecError as exc:  # a model spec is an argument: the documented ConfigError
        raise ConfigError(" ".join(scrub(str(exc)).split())) from None
    except StraTuneError as exc:
        line = " ".join(scrub(str(exc)).split())  # as the command prints it: no secrets
        if line != str(exc):
            exc.args = (line,)
        raise
    except Exception as exc:
        line = error_line(exc)
        if line is None:
            raise
        raise StraTuneError(" ".join(scrub(line).split())) from exc


def said(console: Console, *starts: str) -> str:
    """The last message the command printed that begins with one of `starts`, and the lines
    printed after it, as one line."""
    lines = console.export_text(clear=False).splitlines()
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].startswith(starts):
            return "; ".join(" ".join(line.split()) for line in lines[i:] if line.strip())
    return "the run ended early"


def raise_for(code: int, console: Console) -> None:
    if code == runner.EXIT_STOPPED:
        raise RunStopped(said(console, "stopped"))
    if code == runner.EXIT_INTERRUPTED:
        raise KeyboardInterrupt
    if code != runner.EXIT_OK:
        raise ModelCallFailed(said(console, "model call failed"))
