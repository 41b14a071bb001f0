"""One exception family. Messages name the field, file or state and what to do."""

from __future__ import annotations

from llm_cache.errors import StraTuneError

__all__ = ["BudgetError", "ConfigError", "CoreInvariantError", "StraTuneError", "TaskDataError"]


class ConfigError(StraTuneError):
    """A configuration value is out of range or inconsistent. `field` names the Config field
    when there is one, so a caller can say which layer (file, flag) set it."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class TaskDataError(StraTuneError):
    """A task file is malformed: the message names file, line and field."""


class BudgetError(StraTuneError):
    """The budget cannot pay for what was asked (e.g. smaller than one batch)."""


class CoreInvariantError(StraTuneError):
    """An internal rule was broken; the message names the state and the event."""
