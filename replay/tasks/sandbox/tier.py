"""One sandbox tier: its name, whether a cgroup bounds its runs, and how it confines.

`tiers` detects which of them this machine offers; `run` runs a program in a given one.
"""

from __future__ import annotations

import enum
import os

from attrs import frozen

from replay.tasks.sandbox import bubblewrap, landlock_tier
from stratune_core.records.errors import StraTuneError


class TierName(enum.Enum):
    BUBBLEWRAP = "bubblewrap"
    LANDLOCK = "landlock"


@frozen
class Tier:
    name: TierName
    cgroup: bool  # aggregate limits from a per-run cgroup (else from rlimits)

    def describe(self) -> str:
        limits = "cgroup memory+pids per run" if self.cgroup else "rlimits sized to the run's totals"
        root = os.geteuid() == 0
        if self.name is TierName.BUBBLEWRAP:
            path = bubblewrap.executable() or "bwrap (gone)"
            binary = f"bubblewrap {bubblewrap.version(path) or '(unknown version)'} at {path}"
            who = "host nobody, no capabilities" if root else "the invoking user mapped to nobody"
            return f"{binary}: namespaces (as {who}); {limits}"
        uid = landlock_tier.program_uid()
        who = ("the invoking user" if not root else
               "nobody, no capabilities" if uid else "uid 0 without capabilities")
        return f"Landlock + seccomp (as {who}); {limits}"


class SandboxUnavailable(StraTuneError):
    """No sandbox tier can hold the rules on this machine."""
