"""Run untrusted Python (SpreadsheetBench programs) confined: see `tiers` for what is used.

Rules every tier holds: the program sees only its input copy, its own fresh work directory,
the system and the interpreter (read-only); nothing it starts outlives the run; memory and
processes are limited per run; it never runs with the user's full rights.
"""

from replay.tasks.sandbox.limits import DEFAULT_LIMITS, Limits
from replay.tasks.sandbox.run import SandboxResult, run_python
from replay.tasks.sandbox.tier import SandboxUnavailable, Tier, TierName
from replay.tasks.sandbox.tiers import choose, detect

__all__ = [
    "DEFAULT_LIMITS",
    "Limits",
    "SandboxResult",
    "SandboxUnavailable",
    "Tier",
    "TierName",
    "choose",
    "detect",
    "run_python",
]
