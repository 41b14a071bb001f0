"""Scripted cells for the grid, compare and tracking tests: the toy task and the scripted toy
models (tests/support/toy.py), built in process for each cell. Module-level and picklable, so
Ray workers (started in the repository) can import and use them too."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

from llm_cache.backends.base import Backend
from llm_cache.backends.function import FunctionBackend
from llm_cache.records import Role
from replay.grid.cells import Cell
from tests.support.toy import ToyOptimizer, ToyTask, toy_target
from tests.support.toy_methods import MethodOptimizer, method_target

TARGET = "anthropic:toy-target"  # parses as a spec; the backend below answers it in process
OPTIMIZER = "anthropic:toy-optimizer"


class ScriptedEnv:
    """The toy task (`limit` = |train|) and the scripted target and optimizer for every cell."""

    def __init__(self, style: str = "mixed") -> None:
        self.style = style

    def backends(self, cell: Cell) -> Mapping[Role, Backend]:
        return {Role.TARGET: FunctionBackend(toy_target, name="toy-target"),
                Role.OPTIMIZER: FunctionBackend(ToyOptimizer(style=self.style),
                                                name="toy-optimizer")}

    def task(self, cell: Cell) -> ToyTask:
        return ToyTask(n_train=cell.options.task.limit or 48)


class MethodsEnv(ScriptedEnv):
    """The scripted models with the baselines' answers (tests/support/toy_methods.py)."""

    def backends(self, cell: Cell) -> Mapping[Role, Backend]:
        return {Role.TARGET: FunctionBackend(method_target, name="toy-target"),
                Role.OPTIMIZER: FunctionBackend(MethodOptimizer(), name="toy-optimizer")}


def write_grid(path: Path, *, ablations: str, seeds: str = "[0, 1]", extra: str = "",
               limit: int = 24, target: str = TARGET, optimizer: str = OPTIMIZER) -> Path:
    path.write_text(textwrap.dedent(f"""\
        seeds = {seeds}
        test_eval = true
        {extra}
        [tasks.toy]
        task = "toy"
        limit = {limit}

        [pairs.scripted]
        target = "{target}"
        optimizer = "{optimizer}"

        [ablations]
        """) + textwrap.dedent(ablations), encoding="utf-8")
    return path


def digests(root: Path) -> dict[str, str]:
    """Each cell's event digest, by cell id."""
    import json

    return {str(p.parent.relative_to(root)): json.loads(p.read_text())["event_digest"]
            for p in sorted(root.rglob("manifest.json")) if "cache" not in p.parts}
