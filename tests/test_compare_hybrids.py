"""`stratune compare` over Table 4's runs: a hybrid is labelled by its generator (not as
StraTune, whose method record it carries), and the hybrids table follows the paper's layout:
each method, its hybrid indented under it, StraTune last, the best in a column in bold."""

from __future__ import annotations

import pytest

from replay.compare.hybrids import INDENTED
from replay.compare.hybrids import build as hybrids_table
from replay.compare.render import markdown
from replay.compare.runs import load_runs, method_of
from replay.compare.tables import build
from stratune_core.records.method_spec import Generator, GepaMethod, StraTuneMethod
from tests.support.cli import record_in_process

RUNS = {"gepa": GepaMethod(), "gepa-hybrid": StraTuneMethod(generator=Generator.GEPA),
        "skillopt-hybrid": StraTuneMethod(generator=Generator.SKILLOPT),
        "stratune": StraTuneMethod()}


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("hybrids")
    for name, method in RUNS.items():
        record_in_process(root / name, seed=4, n_train=30, test_split="test", method=method)
    return root


def test_hybrids_are_labelled_by_their_generator(runs_dir):
    labels = {run.path.name: method_of(run) for run in load_runs([str(runs_dir)])}
    assert labels == {"gepa": "GEPA", "gepa-hybrid": "GEPA with StraTune evaluation",
                      "skillopt-hybrid": "SkillOpt with StraTune evaluation",
                      "stratune": "StraTune"}


def test_the_hybrids_table_follows_the_papers_layout(runs_dir):
    runs = load_runs([str(runs_dir)])
    table = hybrids_table(runs)
    assert table is not None
    shown = [row.cells[0] for row in table.rows]
    # SkillOpt itself has no run here: its row is kept (—) so that its hybrid reads as its own
    assert shown == ["GEPA", INDENTED, "SkillOpt", INDENTED, "StraTune"]
    assert table.rows[2].cells[1].mean is None
    stats = [row.cells[1] for i, row in enumerate(table.rows) if i != 2]
    assert all(s.mean is not None for s in stats)
    best = max(s.mean for s in stats)
    assert all((s.rank == 1) == (s.mean == best) for s in stats)
    assert all(s.rank in (None, 1) for s in stats)  # the paper marks the best only
    assert "**" in markdown(table).split("\n", 1)[1]
    # the methods table (Table 2) leaves the hybrids out
    methods = next(t for t in build(runs) if t.id == "methods")
    assert not any("with StraTune evaluation" in str(row.cells[0]) for row in methods.rows)


def test_no_hybrid_no_table(runs_dir):
    runs = [r for r in load_runs([str(runs_dir)]) if "hybrid" not in r.path.name]
    assert hybrids_table(runs) is None
    assert "hybrids" not in {t.id for t in build(runs)}
