"""Running one tool call so that it cannot hang or crash the run: a Python callable runs in a
forked child with a time limit (a call that hangs is killed when it runs out); its result is
text, clipped to a size limit; a bad call, an exception, a timeout and an oversized result all
come back as an error result for the model, never as an exception of the run."""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Callable, Mapping
from typing import Any

from attrs import frozen

MAX_RESULT_CHARS = 4000  # what a tool result may hand back to the model


@frozen(kw_only=True)
class ToolOutcome:
    text: str
    error: bool = False


def result_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)


def clipped(text: str, limit: int = MAX_RESULT_CHARS) -> ToolOutcome:
    if len(text) <= limit:
        return ToolOutcome(text=text)
    return ToolOutcome(text=f"{text[:limit]}\n… error: the result was {len(text):,} characters, "
                            f"cut to the limit of {limit:,}", error=True)


def bad_arguments(name: str, exc: BaseException) -> str:
    """One line per invalid argument, as the model can fix them."""
    cause = exc.__cause__ if exc.__cause__ is not None else exc
    errors = getattr(cause, "errors", None)
    if callable(errors):
        found = "; ".join(f"{'.'.join(map(str, e.get('loc', ()))) or 'arguments'}: {e.get('msg')}"
                          for e in errors())
        return f"error: invalid arguments for {name}: {found}"
    return f"error: invalid arguments for {name}: {cause}"


def _child(call: Callable[[dict[str, Any]], Any], arguments: dict[str, Any], name: str,
           conn: Any) -> None:
    try:
        value = call(arguments)
    except ValueError as exc:
        if str(exc).startswith("Invalid arguments for function"):
            conn.send((bad_arguments(name, exc), True))
        else:
            conn.send((f"error: {type(exc).__name__}: {exc}", True))
    except BaseException as exc:
        conn.send((f"error: {type(exc).__name__}: {exc}", True))
    else:
        conn.send((result_text(value), False))
    finally:
        conn.close()
        os._exit(0)  # no atexit handler, no flush of the parent's buffers from the child


def run_call(call: Callable[[dict[str, Any]], Any], arguments: Mapping[str, Any], *, name: str,
             seconds: float) -> ToolOutcome:
    """`call(arguments)` in a forked child, stopped after `seconds`."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(call, dict(arguments), name, send), daemon=True)
    child.start()
    send.close()
    try:
        if not receive.poll(max(0.0, seconds)):
            child.kill()
            return ToolOutcome(text=f"error: {name} did not finish within {seconds:.2g} s and was "
                                    "stopped", error=True)
        try:
            text, error = receive.recv()
        except EOFError:  # the child died without a word (os._exit, a signal)
            return ToolOutcome(text=f"error: {name} ended without a result (exit code "
                                    f"{child.exitcode})", error=True)
    finally:
        child.join(1.0)
        if child.is_alive():
            child.kill()
            child.join()
        receive.close()
    outcome = clipped(text)
    return ToolOutcome(text=outcome.text, error=error or outcome.error)
