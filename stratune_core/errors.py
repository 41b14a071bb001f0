"""One exception family. Messages name the field, file or state and what to do."""

from __future__ import annotations

from llm_cache.errors import StraTuneError

__all__ = ["BudgetError", "ConfigError", "CoreInvariantError", "StraTuneError", "TaskDataError"]


class ConfigError(StraTuneError):
    """A configuration value is out of range or inconsistent."""


class TaskDataError(StraTuneError):
    """A task file is malformed: the message names file, line and field."""


class BudgetError(StraTuneError):
    """The budget cannot pay for what was asked (e.g. smaller than one batch)."""


class CoreInvariantError(StraTuneError):
    """An internal rule was broken; the message names the state and the event."""
