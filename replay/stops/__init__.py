"""Stop controls: --max-cost, --timeout, the STOP file, and what each stop says."""

__all__ = ["control", "flags", "hard_timeout", "notes"]
