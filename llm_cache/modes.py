"""How the client uses the cache."""

from __future__ import annotations

import enum


class Mode(enum.Enum):
    LIVE = "live"  # read-through and write-through
    REPLAY = "replay"  # strict offline: a miss raises CacheMiss, no backend is ever called
    OFF = "off"  # neither read nor write; every request reaches the backend

    @classmethod
    def parse(cls, value: str | Mode) -> Mode:
        if isinstance(value, Mode):
            return value
        try:
            return cls(value)
        except ValueError:
            choices = ", ".join(m.value for m in cls)
            raise ValueError(f"cache mode {value!r} is unknown; use one of: {choices}") from None
