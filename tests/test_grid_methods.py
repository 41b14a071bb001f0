"""The grid's methods axis: `methods = [...]` adds one cell row per baseline beside StraTune's
ablations, a baseline ablation takes only the shared settings, and `compare` reads the cells
into the methods table."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from llm_cache.records import Role
from replay.compare.methods import build as methods_table
from replay.compare.runs import load_runs
from replay.grid.grid_file import load_grid
from replay.grid.run import run_grid
from replay.grid.spec import GridError
from tests.grid_support import MethodsEnv, write_grid


@pytest.fixture(scope="module")
def grid(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("grid")
    path = write_grid(base / "grid.toml", ablations="full = {}\n", seeds="[0]",
                      extra='methods = ["textgrad", "iter-cot"]', limit=24)
    result = run_grid(load_grid(path), base / "out", Console(file=io.StringIO()),
                      env=MethodsEnv())
    assert result.code == 0 and result.stopped is None
    return base / "out"


def test_each_method_is_a_row_of_cells(grid):
    kinds = {}
    for name in ("full", "textgrad", "iter-cot"):
        manifest = json.loads((grid / f"toy/scripted/{name}/seed0/manifest.json").read_text())
        assert manifest["finished"]
        kinds[name] = manifest["method"]["_type"]
    assert kinds == {"full": "StraTuneMethod", "textgrad": "TextGradMethod",
                     "iter-cot": "IterCotMethod"}


def test_compare_reads_the_grid_into_the_methods_table(grid):
    table = methods_table(load_runs([str(grid)]))
    assert table is not None
    assert [row.cells[0] for row in table.rows] == ["Initial skill", "TextGrad", "Iter-CoT",
                                                     "StraTune"]


@pytest.mark.parametrize(("text", "key"), [
    ('tg = { method = "textgrad", selector = "random" }\n', "ablations.tg.selector"),
    ('tg = { method = "textgrad", profile = "released" }\n', "ablations.tg.profile"),
    ('tg = { method = "dspy" }\n', "ablations.tg.method"),
])
def test_a_baseline_ablation_refuses_stratune_settings(tmp_path, text, key):
    path = write_grid(tmp_path / "grid.toml", ablations=text)
    with pytest.raises(GridError, match=key.replace(".", r"\.")):
        load_grid(path)


def test_a_method_named_like_an_ablation_is_refused(tmp_path):
    path = write_grid(tmp_path / "grid.toml", ablations="textgrad = {}\n",
                      extra='methods = ["textgrad"]')
    with pytest.raises(GridError, match=r"methods\[0\]"):
        load_grid(path)


class _NoTemperatureEnv(MethodsEnv):
    """A target that takes no temperature, as the Claude API under the installed SDK."""

    def backends(self, cell):
        backends = dict(super().backends(cell))
        backends[Role.TARGET].accepts_temperature = False
        return backends


def test_a_grid_with_an_iter_cot_cell_on_a_target_without_temperature_reruns(tmp_path):
    """The cell's manifest records `temperature: null`; the grid's check of its existing cells
    compares with the options as `train` records them, so a rerun (and a resume) of the grid
    is not refused by its own cell."""
    path = write_grid(tmp_path / "grid.toml", ablations="full = { max_rounds = 1 }\n",
                      seeds="[0]", extra='methods = ["iter-cot"]', limit=24)
    out = tmp_path / "out"
    first = run_grid(load_grid(path), out, Console(file=io.StringIO()), env=_NoTemperatureEnv())
    assert first.code == 0
    manifest = out / "toy/scripted/iter-cot/seed0/manifest.json"
    assert json.loads(manifest.read_text())["method"]["temperature"] is None
    before = manifest.read_bytes()
    again = run_grid(load_grid(path), out, Console(file=io.StringIO()), env=_NoTemperatureEnv())
    assert again.code == 0 and manifest.read_bytes() == before
    # a cell stopped before it finished resumes the same way
    data = json.loads(before)
    (out / "toy/scripted/iter-cot/seed0/events.jsonl").write_text("")
    data.update(finished=False, events=0, event_digest="", final_id=None, seal=None)
    manifest.write_text(json.dumps(data))
    resumed = run_grid(load_grid(path), out, Console(file=io.StringIO()),
                       env=_NoTemperatureEnv())
    assert resumed.code == 0
    assert json.loads(manifest.read_text())["event_digest"] == json.loads(before)["event_digest"]


def test_a_finished_iter_cot_cell_passes_dry_run_and_a_rerun_of_the_command(tmp_path, capsys,
                                                                            monkeypatch):
    """`grid --dry-run` checks existing cells through the same function as a run: a finished
    Iter-CoT cell (its manifest says `temperature: null` for Claude) is listed, not refused."""
    from benchmarks.common import ToyResponder
    from llm_cache.testing.fake_server import FakeAnthropicServer
    from replay.commands.app import main as stratune

    grid = tmp_path / "g.toml"
    grid.write_text('seeds = 1\nbudget = "6x"\n[tasks.demo]\ntask = "demo"\nlimit = 8\n'
                    '[pairs.p]\ntarget = "anthropic:claude-haiku-4-5"\n'
                    'optimizer = "anthropic:claude-sonnet-4-6"\n'
                    '[ablations]\nic = { method = "iter-cot" }\n')
    out = tmp_path / "g"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    with FakeAnthropicServer(responder=ToyResponder()) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        assert stratune(["grid", str(grid), "--out", str(out)]) == 0
    capsys.readouterr()
    assert stratune(["grid", str(grid), "--out", str(out), "--dry-run"]) == 0
    assert capsys.readouterr().out.split() == ["finished", "demo/p/ic/seed0"]
    assert stratune(["grid", str(grid), "--out", str(out)]) == 0  # no server: nothing is called
    assert "1 skipped" in capsys.readouterr().out
