"""Stop controls for `train` and `grid`: `--max-cost USD`, `--timeout DURATION` and a STOP file.

Each stop leaves the run as Ctrl-C does (events of the finished rounds on disk, every paid call
in the cache) and ends with one line saying why and how to continue:

- a STOP file (`touch DIR/STOP`) is looked for at each round boundary;
- `--timeout` is checked at each round boundary and before each paid call;
- `--max-cost` is a gate in front of every paid call (`llm_cache.gates.CostCap`): a call goes out
  only if its worst-case cost still fits under the cap, counting what the run paid in earlier
  sittings (the cost of every call in its cache).

Rerunning the same command (without the STOP file, with a later deadline or a higher cap)
continues the run; the finished run is identical to an uninterrupted one.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from llm_cache.accounting import Accounting
from llm_cache.errors import CacheCorruptError
from llm_cache.gates import StopRequested
from llm_cache.prices import PriceTable, default_prices
from llm_cache.records import Request, Response
from llm_cache.store import CacheStore
from stratune_core.records.errors import ConfigError
from stratune_core.state.events import Event
from stratune_core.state.state import State

STOP_FILE = "STOP"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhd])")
# Longer than any run; the watchdog's wait and the deadline's clock arithmetic overflow far
# past it (99999999999h does), and a typo of that size is better refused than waited for.
MAX_DURATION_DAYS = 366
CONTINUE = "run the same command again to continue (paid calls are answered from the cache)"


def parse_duration(text: str, *, flag: str = "--timeout") -> float:
    """Seconds from `90`, `90s`, `30m`, `2h`, `1h30m` or `1.5d`."""
    raw = text.strip().lower()
    try:
        seconds = float(raw)
    except ValueError:
        parts = _DURATION.findall(raw)
        units = [u for _, u in parts]
        # each unit once, the largest first: 1h1h or 30m1h is a typo, not 2 h or 90 min
        in_order = units == sorted(set(units), key=lambda u: -_UNITS[u])
        if not parts or "".join(n + u for n, u in parts) != raw or not in_order:
            raise ConfigError(f"{flag}: {text!r} is not a duration; write e.g. 90s, 30m, 2h or "
                              "1h30m (each unit once, the largest first)") from None
        seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    if not math.isfinite(seconds) or seconds <= 0:
        raise ConfigError(f"{flag}: {text!r} must be a finite duration longer than zero")
    if seconds > MAX_DURATION_DAYS * _UNITS["d"]:
        raise ConfigError(f"{flag}: {text!r} is longer than {MAX_DURATION_DAYS} days; give a "
                          "shorter duration, or none to run until the budget is spent")
    return seconds


def parse_cost(text: str, *, flag: str = "--max-cost") -> float:
    try:
        value = float(text.strip().lstrip("$"))
    except ValueError:
        raise ConfigError(f"{flag}: {text!r} is not an amount in USD, e.g. 25 or 2.50") from None
    if not math.isfinite(value) or value <= 0:  # NaN compares false with everything
        raise ConfigError(f"{flag}: {text!r} must be a finite amount above zero")
    return value


def cache_cost(cache_dirs: Iterable[Path], prices: PriceTable | None = None) -> float:
    """What the calls stored in these caches cost: for a run's own cache, what the run has paid
    so far over all its sittings (a corrupt entry is skipped; it is paid again if needed)."""
    table = prices or default_prices()
    total = 0.0
    for directory in cache_dirs:
        if not (directory / "cache.db").is_file():
            continue
        store = CacheStore(directory)
        try:
            for _, entry in store.entries():
                if isinstance(entry, CacheCorruptError):
                    continue
                model = str(entry.document().get("model", ""))
                total += table.cost(model, entry.response.usage) or 0.0
        finally:
            store.close()
    return total


class StopControl:
    """Stop files and a deadline, checked at round boundaries; the deadline and an interrupt
    (a grid's Ctrl-C) also before every paid call, as a gate. `external` is an extra check
    (a Ray grid's board) returning a reason or None."""

    def __init__(self, stop_files: Sequence[Path] = (), *, deadline: float | None = None,
                 timeout_text: str = "", external: Callable[[], str | None] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.stop_files = tuple(Path(p) for p in stop_files)
        self.deadline = deadline  # wall-clock seconds (time.time), so it travels between nodes
        self.timeout_text = timeout_text
        self.external = external
        self.clock = clock
        self.interrupted = False

    @classmethod
    def for_run(cls, out: Path, *, timeout: str | None = None, extra_files: Sequence[Path] = (),
                started: float | None = None) -> StopControl:
        deadline = None
        if timeout is not None:
            deadline = (time.time() if started is None else started) + parse_duration(timeout)
        return cls((Path(out) / STOP_FILE, *extra_files), deadline=deadline,
                   timeout_text=timeout or "")

    def interrupt(self) -> None:
        self.interrupted = True

    def timed_out(self) -> bool:
        return self.deadline is not None and self.clock() >= self.deadline

    def after_round(self, state: State, events: Sequence[Event], accounting: Accounting) -> None:
        if state.finished:
            return  # the run is complete; nothing left to stop
        where = f"after round {state.round}" if state.round else "before round 1"
        for path in self.stop_files:
            if path.exists():
                raise StopRequested(f"{path} exists (stopped {where})",
                                    f"remove it (rm {path}) and {CONTINUE}")
        if self.timed_out():
            raise StopRequested(f"--timeout {self.timeout_text} reached (stopped {where})",
                                CONTINUE)
        reason = self.external() if self.external is not None else None
        if reason is not None:
            raise StopRequested(f"{reason} (stopped {where})", CONTINUE)
        if self.interrupted:
            raise StopRequested(f"interrupted (stopped {where})", CONTINUE)

    async def enter(self, request: Request, width: int = 1) -> None:
        if self.interrupted:
            raise StopRequested("interrupted (stopped within a round)", CONTINUE)
        if self.timed_out():
            raise StopRequested(f"--timeout {self.timeout_text} reached (stopped within a "
                                "round)", CONTINUE)

    async def leave(self, ticket: Any, response: Response | None) -> None:
        return None
