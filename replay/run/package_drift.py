"""`replay`'s note when a package the run's method runs through (its entry's `packages`) is installed at
another version than the one the manifest records: the replay still runs (the same version
usually makes the same calls), and if it fails the note says which package to look at first."""

from __future__ import annotations

from importlib import metadata

from replay.rundir.serde import Manifest
from stratune_core.round.registry import packages_of


def installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def drift_notes(manifest: Manifest) -> list[str]:
    """One line per method package whose installed version differs from the recorded one. A
    manifest written before these versions were recorded holds none: nothing to compare."""
    recorded = {p.name: p.version for p in manifest.packages}
    notes = []
    if "claude-code" in recorded:  # a harness run: its CLI's prompts and tools are the CLI's
        from replay.harness.cli import cli_version

        try:
            now_cli = cli_version().split()[0]
        except Exception:  # noqa: BLE001 (not installed: the replay itself says so)
            now_cli = None
        if now_cli != recorded["claude-code"]:
            notes.append(f"the run was recorded with Claude Code {recorded['claude-code']}; "
                         f"{'no CLI is installed' if now_cli is None else f'{now_cli} is'}: its "
                         "requests may differ, and a replay then misses the cache")
    for name in packages_of(manifest.method):
        then, now = recorded.get(name), installed(name)
        if then is None or then == now:
            continue
        notes.append(f"the run was recorded with {name} {then}; "
                     f"{'it is not installed' if now is None else f'{name} {now} is installed'}"
                     f": a difference in the replay may come from {name}, not from the run")
    return notes
