"""The widths output is laid out for: `view --width` and the terminal's `$COLUMNS`, bounded
alike. Rich takes `$COLUMNS` as it is: 0 printed nothing, and 100000000 laid a run's tables
out for minutes; below MIN_WIDTH no table reads, past MAX_WIDTH no screen shows it."""

from __future__ import annotations

import os

MIN_WIDTH = 40
MAX_WIDTH = 1000  # --width: columns of an export; wider is a typo and would take minutes


def console_width() -> int | None:
    """`$COLUMNS` held within [MIN_WIDTH, MAX_WIDTH]; None (the terminal's own width, or 80)
    when it is unset or not a number, as Rich reads it."""
    raw = os.environ.get("COLUMNS", "").strip()
    if not raw.isdigit():
        return None
    return min(max(int(raw), MIN_WIDTH), MAX_WIDTH)
