"""The grid's hybrids: `generators = [...]` (or an ablation's `generator = ...`) adds Table 4's
cells beside StraTune's and the baselines', a generator where it does not belong is an error
naming the key, and `compare` reads the cells into the hybrids table."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from replay.compare.hybrids import INDENTED
from replay.compare.hybrids import build as hybrids_table
from replay.compare.runs import load_runs
from replay.grid.grid_file import load_grid
from replay.grid.run import run_grid
from replay.grid.spec import GridError
from tests.grid_support import MethodsEnv, write_grid


@pytest.fixture(scope="module")
def grid(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("grid")
    path = write_grid(base / "grid.toml", seeds="[0]", limit=24,
                      ablations='full = {}\nmine = { generator = "skillopt", max_rounds = 4 }\n',
                      extra='methods = ["gepa"]\ngenerators = ["gepa"]')
    result = run_grid(load_grid(path), base / "out", Console(file=io.StringIO()),
                      env=MethodsEnv())
    assert result.code == 0 and result.stopped is None
    return base / "out"


def test_each_generator_is_a_row_of_cells(grid):
    methods = {}
    for name in ("full", "mine", "gepa", "gepa-hybrid"):
        manifest = json.loads((grid / f"toy/scripted/{name}/seed0/manifest.json").read_text())
        assert manifest["finished"]
        methods[name] = manifest["method"]
    assert methods == {"full": {"_type": "StraTuneMethod"},
                       "mine": {"_type": "StraTuneMethod", "generator": "skillopt"},
                       "gepa": {"_type": "GepaMethod", "candidate_selection": "pareto",
                                "minibatch": 3, "use_merge": False, "validation_frac": 0.2},
                       "gepa-hybrid": {"_type": "StraTuneMethod", "generator": "gepa"}}


def test_compare_reads_the_grid_into_the_hybrids_table(grid):
    table = hybrids_table(load_runs([str(grid)]))
    assert table is not None
    assert [row.cells[0] for row in table.rows] == ["GEPA", INDENTED, "SkillOpt", INDENTED,
                                                     "StraTune"]


@pytest.mark.parametrize(("text", "key"), [
    ('h = { method = "textgrad", generator = "gepa" }\n', "ablations.h.generator"),
    ('h = { generator = "dspy" }\n', "ablations.h.generator"),
    ('h = { generator = "gepa", selector = "random" }\n', "ablations.h.generator"),
])
def test_a_generator_where_it_does_not_belong_is_refused(tmp_path, text, key):
    path = write_grid(tmp_path / "grid.toml", ablations=text)
    with pytest.raises(GridError, match=key.replace(".", r"\.")):
        load_grid(path)


def test_a_generator_named_like_an_ablation_is_refused(tmp_path):
    path = write_grid(tmp_path / "grid.toml", ablations="gepa-hybrid = {}\n",
                      extra='generators = ["gepa"]')
    with pytest.raises(GridError, match=r"generators\[0\]"):
        load_grid(path)
