"""The grid file (TOML, read with the stdlib `tomllib`): tasks × model pairs × ablations × seeds.

    seeds = 3                        # or a list: [0, 1, 2]
    budget = "6x"                    # every cell (an ablation may set its own)
    test_eval = true                 # score initial and final skill on the test split
    profile = "paper"                # optional; `config` = a JSON file of Config fields
    concurrency = 8                  # each cell's own client concurrency

    [defaults]                       # Config fields (or train flags) for every cell
    max_rounds = 30

    [max_connections]                # one limit per model endpoint, shared by all cells
    anthropic = 64

    [tasks.livemath]                 # task, scorer, placement, limit, data
    task = "livemath"

    [pairs.haiku]
    target = "anthropic:claude-haiku-4-5"
    optimizer = "anthropic:claude-sonnet-4-6"

    [ablations]                      # short name = Config fields or train flags
    full = {}
    i1-only = { selector = "fixed:I1" }
    replay = { selector = "replay:full" }      # the `full` cell of the same task, pair and seed
    no-hist = { no-history = true }
    gepa-like = { method = "textgrad" }        # a baseline (docs/baselines.md) as a row

    methods = ["textgrad", "iter-cot"]         # the methods axis: one ablation per baseline,
                                               # named after it, beside the StraTune ablations
    generators = ["gepa", "skillopt"]          # Table 4's hybrids: ablations gepa-hybrid and
                                               # skillopt-hybrid (or { generator = "gepa" })

Every error names the file and the key, and is an exit-2 error. Relative paths (task files,
data directories, config files, replay sources) are relative to the grid file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from attrs import field, frozen

from replay.rundir.serde import TaskSpec
from stratune_core.records.errors import ConfigError
from stratune_core.records.method_spec import MethodSpec, default_method

TOP_KEYS = ("seeds", "budget", "test_eval", "profile", "config", "concurrency", "defaults",
            "max_connections", "tasks", "pairs", "ablations", "methods", "generators")
TASK_KEYS = ("task", "scorer", "placement", "limit", "data")
PAIR_KEYS = ("target", "optimizer")
FLAGS = {"no_history": "history", "no_validation": "validation",
         "no_final_selection": "final_selection"}
RUN_KEYS = ("profile", "config", "budget", "method", "generator")  # ablation keys that are not Config fields
MAX_SEEDS = 1000  # seeds per cell: the paper's tables use 3 to 5; a million cells is a typo
MAX_SEED = 2**63 - 1  # numpy's SeedSequence takes any, the manifest stores it as JSON
NOT_SETTABLE = ("seed", "target_model", "optimizer_model")  # set by the cell itself
# A name is a directory of each cell's path (DIR/<task>/<pair>/<ablation>/seed<k>): at most
# NAME_MAX characters, so no cell's path part passes a file system's 255 bytes.
NAME_MAX = 100
NAME = re.compile(rf"^[A-Za-z0-9][A-Za-z0-9._+=-]{{0,{NAME_MAX - 1}}}$")


class GridError(ConfigError):
    """A grid file that cannot be run; the message names the file and the key."""


@frozen(kw_only=True)
class TaskEntry:
    name: str
    spec: TaskSpec
    data_dir: str | None = None


@frozen(kw_only=True)
class PairEntry:
    name: str
    target: str
    optimizer: str


@frozen(kw_only=True)
class Ablation:
    name: str
    overrides: tuple[tuple[str, Any], ...] = field(default=(), converter=tuple)
    profile: str | None = None
    config_file: str | None = None
    replay_of: str | None = None  # another ablation of this grid whose cells it replays
    method: MethodSpec = field(factory=default_method)


def refuse_same_cells(ablations: tuple[Ablation, ...],
                      error: Callable[[str, str], GridError]) -> None:
    """Two ablations that would run the same cells (`methods = ["stratune"]` beside
    `full = {}` paid for every full cell twice) are refused, naming the second."""
    def what(a: Ablation) -> tuple[Any, ...]:
        return (a.method, a.profile, a.config_file, a.replay_of, sorted(map(repr, a.overrides)))

    for i, first in enumerate(ablations):
        for second in ablations[i + 1:]:
            if what(first) == what(second):
                raise error(f"ablations.{second.name}", f"runs the same cells as "
                            f"{first.name!r} (the same method and settings); drop one")


@frozen(kw_only=True)
class GridSpec:
    path: Path
    tasks: tuple[TaskEntry, ...]
    pairs: tuple[PairEntry, ...]
    ablations: tuple[Ablation, ...]
    seeds: tuple[int, ...]
    test_eval: bool = False
    profile: str = "paper"
    config_file: str | None = None
    concurrency: int = 8
    defaults: tuple[tuple[str, Any], ...] = field(default=(), converter=tuple)
    max_connections: tuple[tuple[str, int], ...] = field(default=(), converter=tuple)

    def ablation(self, name: str) -> Ablation:
        return next(a for a in self.ablations if a.name == name)
