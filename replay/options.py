"""Turning command-line choices into a `Config` and a `Manifest` (no model calls, no run)."""

from __future__ import annotations

import json
import math
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from attrs import field, frozen

from replay.models import canonical_model
from replay.serde import Manifest, Package, TaskSpec, TraceError, config_from_data
from stratune_core.config import Config, profile
from stratune_core.enums import Strategy
from stratune_core.errors import ConfigError
from stratune_core.events import OperatorChosen

PACKAGES = ("stratune", "attrs", "cattrs", "anthropic", "diskcache", "xxhash", "numpy", "rich")


@frozen(kw_only=True)
class RunOptions:
    """Everything `stratune train` was asked to do."""

    task: TaskSpec
    target: str
    optimizer: str
    seed: int = 0
    profile: str = "paper"
    config_file: str | None = None
    overrides: tuple[tuple[str, Any], ...] = field(default=(), converter=tuple)
    data_dir: str | None = None


def parse_budget(text: str) -> dict[str, Any]:
    """`300` is an absolute budget, `6x` a multiple of |train|."""
    raw = text.strip().lower()
    try:
        if raw.endswith("x") and math.isfinite(float(raw[:-1])) and float(raw[:-1]) > 0:
            return {"budget": None, "budget_multiplier": float(raw[:-1])}
        if int(raw) > 0:
            return {"budget": int(raw)}
    except ValueError:
        pass
    raise ConfigError(f"--budget: {text!r} is neither N (executions) nor Kx (K times |train|), "
                      "with N and K above 0")


def build_config(options: RunOptions) -> Config:
    """Profile, then the --config file, then flags: later sources win."""
    config = profile(options.profile)
    if options.config_file is not None:
        path = Path(options.config_file)
        try:
            data = json.loads(path.read_text(encoding="utf-8"),
                              parse_constant=lambda name: _not_json(path, name))
        except FileNotFoundError:
            raise ConfigError(f"--config: {path} not found") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"--config {path}: cannot be read as UTF-8 text "
                              f"({getattr(exc, 'strerror', None) or exc})") from None
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}: line {exc.lineno}: not JSON ({exc.msg})") from None
        config = config_from_data(data, config, where=str(path))
    overrides = dict(options.overrides)
    return config.replace(
        **overrides,
        seed=options.seed,
        target_model=canonical_model(options.target),
        optimizer_model=canonical_model(options.optimizer),
    )


def _not_json(path: Path, name: str) -> Any:
    """NaN and Infinity are not JSON; Python's parser accepts them unless told not to."""
    raise ConfigError(f"{path}: {name} is not a JSON number; every value must be finite")


def replay_sequence(config: Config) -> tuple[Strategy, ...]:
    """For `selector=replay:<trace>`: the recorded run's strategy per round."""
    if not config.selector.startswith("replay:"):
        return ()
    from replay.trace import RunDir

    source = RunDir.at(config.selector.removeprefix("replay:"))
    try:
        _, events = source.read_events()
    except TraceError as exc:
        raise ConfigError(f"selector {config.selector}: {exc}") from None
    chosen = [e.strategy for e in events if isinstance(e, OperatorChosen)]
    if not chosen:
        raise ConfigError(f"selector {config.selector}: the trace chose no operators")
    return tuple(chosen)


def package_versions() -> tuple[Package, ...]:
    out = []
    for name in PACKAGES:
        try:
            out.append(Package(name=name, version=metadata.version(name)))
        except metadata.PackageNotFoundError:
            continue
    return tuple(out)


def git_revision() -> str | None:
    root = Path(__file__).resolve().parents[1]
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    revision = done.stdout.strip()
    if done.returncode != 0 or not revision:
        return None
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                           capture_output=True, text=True, timeout=5, check=False)
    return revision + ("-dirty" if dirty.stdout.strip() else "")


def new_manifest(options: RunOptions, config: Config, sequence: tuple[Strategy, ...]) -> Manifest:
    return Manifest(
        task=options.task,
        target=options.target,
        optimizer=options.optimizer,
        seed=config.seed,
        profile=options.profile,
        config=config,
        replay_sequence=sequence,
        packages=package_versions(),
        git_revision=git_revision(),
    )
