"""`stratune compare` over StraTune and baseline runs: each baseline is labelled by its method
(not as StraTune, whose config it carries), and the methods table ranks them per dataset."""

from __future__ import annotations

import gc
import io

import pytest
from rich.console import Console

from replay.compare.methods import build as methods_table
from replay.compare.methods import ranked
from replay.compare.model import Stat
from replay.compare.render import markdown, render_text
from replay.compare.runs import load_runs, method_of
from replay.models import specs as models
from replay.run import runner
from replay.run.options import RunOptions
from replay.rundir.serde import TaskSpec
from stratune_core.records.method_spec import default_spec
from tests.support.cli import toy_extensions


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("methods")
    for method in ("stratune", "textgrad", "trace2skill"):
        options = RunOptions(task=TaskSpec(spec="toy", limit=30), target="scripted:toy-target",
                             optimizer="scripted:toy-optimizer", seed=4,
                             method=default_spec(method))
        with models.using(toy_extensions()):
            code = runner.train(options, str(root / method), Console(file=io.StringIO()),
                                test_split="test")
        assert code == runner.EXIT_OK
        gc.collect()
    return root


def test_runs_are_labelled_by_their_method(runs_dir):
    labels = {run.path.name: method_of(run) for run in load_runs([str(runs_dir)])}
    assert labels == {"stratune": "StraTune", "textgrad": "TextGrad",
                      "trace2skill": "Trace2Skill"}


def test_the_methods_table_ranks_each_column(runs_dir):
    table = methods_table(load_runs([str(runs_dir)]))
    assert table is not None
    rows = {row.cells[0]: row.cells[1] for row in table.rows}
    assert list(rows) == ["Initial skill", "TextGrad", "Trace2Skill", "StraTune"]
    ranked_stats = [rows[m] for m in ("TextGrad", "Trace2Skill", "StraTune")]
    best = max(s.mean for s in ranked_stats)
    assert all((s.rank == 1) == (s.mean == best) for s in ranked_stats)
    assert rows["Initial skill"].rank is None
    text = markdown(table)
    assert "**" in text.split("\n", 1)[1]  # the best cell in bold, beyond the title
    assert r"\textbf{" in render_text([table], "latex")


def test_ranks_mark_the_best_and_the_second_distinct_mean():
    stats = ranked([Stat(0.5, None, 1), Stat(0.7, None, 1), Stat(0.7, None, 1),
                    Stat(0.2, None, 1), Stat(None, None, 0)])
    assert [s.rank for s in stats] == [2, 1, 1, None, None]
