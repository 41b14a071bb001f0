"""The live display of `stratune train`: one line per round above a budget bar."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from llm_cache.accounting import Accounting
from replay.stops.notes import stop_note
from replay.viewer import event_line
from replay.viewer.style import operator_label, verdict_text
from stratune_core.round.registry import STEP_EVENTS
from stratune_core.state.candidate_events import CandidateDecided
from stratune_core.state.events import (
    Event,
    OperatorChosen,
    RoundSkipped,
    RunFinished,
    RunStarted,
)
from stratune_core.state.state import State

BASELINE_STEPS = STEP_EVENTS


def usage_line(accounting: Accounting) -> str:
    total = accounting.total()
    tokens = total.usage + total.cached_usage
    count = tokens.input_tokens + tokens.output_tokens + tokens.cache_read_tokens \
        + tokens.cache_write_tokens
    cost = total.cost_usd
    return (f"{count / 1000:.1f}k tok · paid ${cost:.4f} · "
            f"{total.paid_calls} calls paid, {total.cache_hits} from cache")


def round_line(events: Sequence[Event]) -> Text | None:
    """A one-line account of a round's operator and verdicts; None for a round with neither."""
    chosen = next((e for e in events if isinstance(e, OperatorChosen)), None)
    skipped = next((e for e in events if isinstance(e, RoundSkipped)), None)
    verdicts = [e for e in events if isinstance(e, CandidateDecided)]
    if chosen is None and skipped is None:
        return None
    round_index = chosen.round if chosen is not None else skipped.round  # type: ignore[union-attr]
    line = Text(f"round {round_index + 1:>3} ", style="bold")
    if chosen is not None:
        line.append_text(operator_label(chosen.strategy, chosen.form))
        line.append(f" ({chosen.source}) ", style="dim")
    if skipped is not None:
        line.append(f"skipped: {skipped.reason}", style="dim")
    for i, decided in enumerate(verdicts):
        line.append(", " if i else "· ")
        line.append_text(verdict_text(decided.verdict))
    if chosen is not None and not verdicts:
        line.append("· no candidate evaluated", style="dim")
    return line


class TrainProgress:
    """Context manager around a rich `Progress`; `update` after every yielded round.

    The bar is transient, so a console that is not a terminal (a log file, a grid cell's log, a
    pipe) never shows it: there is no bar then, only the lines. A bar there would still be
    re-rendered ten times a second by its refresh thread, once per cell in a grid."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._progress: Progress | None = None
        if console.is_terminal:
            self._progress = Progress(
                TextColumn("[bold]budget"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[usage]}"),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            self._task = self._progress.add_task("budget", total=None, usage="")

    def __enter__(self) -> TrainProgress:
        if self._progress is not None:
            self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(None, None, None)

    def update(self, state: State, events: Sequence[Event], accounting: Accounting) -> None:
        for event in events:
            if isinstance(event, RunStarted):
                self.console.print(
                    f"task [bold]{escape(event.task)}[/]: {event.n_train} training samples, budget "
                    f"{event.budget} executions (reserve {event.reserve} for final selection)"
                )
        line = round_line(events)
        usage = usage_line(accounting)
        for event in events:  # a baseline's steps, one line each (they choose no operator)
            if isinstance(event, BASELINE_STEPS):
                self.console.print(event_line(event))
        if line is not None:
            line.append(f"  [{state.budget.spent}/{state.budget.limit}]", style="dim")
            self.console.print(line)
        finished = next((e for e in events if isinstance(e, RunFinished)), None)
        if finished is not None:
            self.console.print(f"finished ({finished.reason.value}) after {finished.rounds} "
                               f"rounds; {usage}")
            if (note := stop_note(finished.reason)) is not None:
                self.console.print(f"[bold yellow]warning[/]: {escape(note)}")
        if self._progress is not None:
            self._progress.update(self._task, total=state.budget.limit,
                                  completed=state.budget.spent, usage=usage)
