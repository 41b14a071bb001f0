"""Grid cells: one ordinary run directory each, `DIR/<task>/<pair>/<ablation>/seed<k>`.

`expand` turns a grid file into cells; `check` builds every cell's config and manifest before
anything runs (a bad field is an exit-2 error naming the grid key) and refuses a grid whose
existing cells were recorded with another definition, as `train` refuses a different run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import xxhash
from attrs import frozen

from replay.grid.spec import Ablation, GridError, GridSpec, PairEntry, TaskEntry
from replay.run.method_options import settings_of
from replay.run.options import RunOptions, build_config, new_manifest
from replay.rundir.trace import CELL_FILE, RunDir
from stratune_core.records.errors import StraTuneError
from stratune_core.records.task import Task
from stratune_core.round.registry import entry_of
from stratune_core.selection.selectors.adaptive import LLMSelector
from stratune_core.selection.selectors.scripted import ReplaySequence


@frozen(kw_only=True)
class Cell:
    task: str
    pair: str
    ablation: str
    seed: int
    options: RunOptions
    test_eval: bool = False
    concurrency: int = 8
    depends_on: str | None = None  # the cell whose strategy sequence a replay cell follows

    @property
    def id(self) -> str:
        return f"{self.task}/{self.pair}/{self.ablation}/seed{self.seed}"

    def path(self, root: Path) -> Path:
        return root / self.id

    def coordinates(self) -> dict[str, Any]:
        return {"task": self.task, "pair": self.pair, "ablation": self.ablation,
                "seed": self.seed}


def replay_batch_order(seed: int) -> int:
    """The batch order of a grid's Replay cell of seed `seed`: derived from the seed, never
    the seed itself (the order of the cell it replays)."""
    derived = xxhash.xxh32_intdigest(f"replay-batch-order|{seed}".encode())
    return derived if derived != seed else derived + 1


def _cell(spec: GridSpec, root: Path, task: TaskEntry, pair: PairEntry, ablation: Ablation,
          seed: int) -> Cell:
    overrides = dict(spec.defaults)
    overrides.update(ablation.overrides)
    depends_on = None
    if ablation.replay_of is not None:
        source = Cell(task=task.name, pair=pair.name, ablation=ablation.replay_of, seed=seed,
                      options=RunOptions(task=task.spec, target="", optimizer=""))
        overrides["selector"] = str(ReplaySequence(trace=str(source.path(root))))
        # the source cell has the same seed: without an order of its own the replay would see
        # the recorded batches again (the manifest's `replay_of` names both orders)
        overrides.setdefault("batch_order_seed", replay_batch_order(seed))
        depends_on = source.id
    options = RunOptions(
        task=task.spec, target=pair.target, optimizer=pair.optimizer, seed=seed,
        # a baseline has no profiles: its cells are recorded as the CLI records them
        profile=(ablation.profile or spec.profile)
        if not entry_of(ablation.method).baseline else "paper",
        config_file=ablation.config_file or spec.config_file,
        overrides=tuple((k, v) for k, v in overrides.items()
                        if (taken := settings_of(ablation.method)) is None or k in taken),
        data_dir=task.data_dir, method=ablation.method,
    )
    return Cell(task=task.name, pair=pair.name, ablation=ablation.name, seed=seed,
                options=options, test_eval=spec.test_eval, concurrency=spec.concurrency,
                depends_on=depends_on)


def expand(spec: GridSpec, root: Path) -> tuple[Cell, ...]:
    """Every cell, sources of replay cells first (they must finish before their followers)."""
    root = root.resolve()
    cells = [_cell(spec, root, t, p, a, s)
             for t in spec.tasks for p in spec.pairs for a in spec.ablations for s in spec.seeds]
    return tuple(sorted(cells, key=lambda c: c.depends_on is not None))


def check(spec: GridSpec, cells: Sequence[Cell], root: Path,
          load_task: Callable[[Cell], Task], fit: Callable[[Cell], RunOptions]) -> None:
    """Build each cell's config and task, and compare existing cells with their definition.
    `fit` gives a cell's options as `train` records them (e.g. a temperature left
    out for a target that takes none); it is asked only for cells already on disk."""
    from replay.run.resume import previous_run  # the refusal message `train` gives

    tasks: dict[str, Task] = {}
    for cell in cells:
        waiting = cell.depends_on is not None and not finished(root / cell.depends_on, False)
        if cell.task not in tasks:  # first: the task's preset is a layer of every cell's config
            try:
                tasks[cell.task] = load_task(cell)
            except StraTuneError as exc:
                raise GridError(f"{spec.path}: tasks.{cell.task}: {exc}") from None
        try:
            # A replay cell whose source has not run yet is checked with another selector: its
            # sequence does not exist yet, everything else must already be right.
            options = _without_replay(cell.options) if waiting else cell.options
            config = build_config(options, tasks[cell.task])
        except StraTuneError as exc:
            what = str(exc).removeprefix("command line: ")  # the grid file is the source
            raise GridError(f"{spec.path}: ablations.{cell.ablation} with pairs.{cell.pair}: "
                            f"{what}") from None
        run_dir = RunDir.at(cell.path(root))
        if waiting or not run_dir.exists():
            continue  # `train` checks a waiting cell when it runs
        try:
            previous_run(run_dir, new_manifest(fit(cell), config))
        except StraTuneError as exc:
            raise GridError(f"cell {cell.id}: {exc}; or restore the grid file's definition "
                            "of this cell") from None


def _without_replay(options: RunOptions) -> RunOptions:
    overrides = tuple((k, str(LLMSelector()) if k == "selector" else v)
                      for k, v in options.overrides)
    return attrs.evolve(options, overrides=overrides)


def finished(path: Path, test_eval: bool) -> bool:
    """A cell that is complete: its run finished (and its test scores exist, if asked for)."""
    run_dir = RunDir.at(path)
    if not run_dir.exists():
        return False
    try:
        manifest = json.loads(run_dir.manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(manifest.get("finished")) and (not test_eval or run_dir.evaluation.is_file())


def write_coordinates(cell: Cell, root: Path) -> None:
    path = cell.path(root)
    path.mkdir(parents=True, exist_ok=True)
    (path / CELL_FILE).write_text(json.dumps({**cell.coordinates(), "id": cell.id},
                                             sort_keys=True) + "\n", encoding="utf-8")
