"""`stratune grid --ray` on a real local Ray instance (ray.init(num_cpus=2)): the same grid gives
the same per-cell event digests as on one machine, a cell whose worker dies is retried by Ray
and resumes from its cache (freeing the connection slot the dead worker held), run directories
can travel with the cells (--ship), and a STOP file stops the cells on the nodes."""

from __future__ import annotations

import io
import os
import shutil
import threading
from pathlib import Path

import pytest
from rich.console import Console

from replay.grid.grid_file import load_grid
from replay.grid.run import GridOptions, GridResult, run_grid
from tests.grid_support import ScriptedEnv, digests, write_grid

ray = pytest.importorskip("ray")

ABLATIONS = 'full = {}\ni1 = { selector = "fixed:I1" }\nrep = { selector = "replay:full" }\n'
LIMIT = "[max_connections]\nanthropic = 1\n"


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _run(path: Path, root: Path, env: ScriptedEnv, **options) -> GridResult:
    """run_grid in a thread with a deadline, so a deadlocked grid fails instead of hanging."""
    out: list[GridResult] = []
    thread = threading.Thread(target=lambda: out.append(run_grid(
        load_grid(path), root, Console(file=io.StringIO(), width=120), env=env,
        options=GridOptions(ray="auto", **options))), daemon=True)
    thread.start()
    thread.join(240)
    assert out, "the Ray grid did not finish within 240 s"
    return out[0]


def _on_target_call(backends, number: int, action) -> None:
    """Run `action()` on the scripted target's call number `number` (then answer it)."""
    target = next(b for b in backends.values() if b.name == "toy-target")
    inner, calls = target.fn, [0]

    def wrapped(request):
        calls[0] += 1
        if calls[0] == number:
            action()
        return inner(request)

    target.fn = wrapped


class DyingEnv(ScriptedEnv):
    """The worker running `cell` dies (os._exit) on its 40th target call, once."""

    def __init__(self, cell: str, marker: Path) -> None:
        super().__init__()
        self.cell, self.marker = cell, marker

    def backends(self, cell):
        backends = super().backends(cell)
        if cell.id == self.cell and not self.marker.exists():
            _on_target_call(backends, 40, self._die)
        return backends

    def _die(self) -> None:
        self.marker.touch()
        os._exit(1)  # the node is lost mid-round, holding a connection slot


class StoppingEnv(ScriptedEnv):
    def __init__(self, stop: Path) -> None:
        super().__init__()
        self.stop = stop

    def backends(self, cell):
        backends = super().backends(cell)
        _on_target_call(backends, 30, self.stop.touch)  # early: mid-run in every cell
        return backends


@pytest.fixture(scope="module")
def local(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("local")
    path = write_grid(base / "grid.toml", ablations=ABLATIONS, extra=LIMIT)
    result = run_grid(load_grid(path), base / "out", Console(file=io.StringIO()),
                      env=ScriptedEnv())
    assert result.code == 0
    return path, digests(base / "out")


def test_the_same_grid_on_ray_gives_the_same_cell_digests(local):
    path, expected = local
    root = path.parent / "out"
    shutil.rmtree(root)  # same directory: a replay cell names its source by path
    result = _run(path, root, ScriptedEnv())
    assert result.code == 0 and {s.state for s in result.statuses} == {"done"}
    assert digests(root) == expected and len(expected) == 6


def test_a_lost_worker_is_retried_and_resumes_from_its_cache(local, tmp_path):
    path, expected = local
    grid = write_grid(tmp_path / "grid.toml", ablations='i1 = { selector = "fixed:I1" }\n',
                      seeds="[1]", extra=LIMIT)
    env = DyingEnv("toy/scripted/i1/seed1", tmp_path / "died")
    result = _run(grid, tmp_path / "out", env)
    assert (tmp_path / "died").exists()  # the first attempt did die
    assert result.code == 0 and result.statuses[0].state == "done"
    assert digests(tmp_path / "out") == {"toy/scripted/i1/seed1":
                                         expected["toy/scripted/i1/seed1"]}
    log = (tmp_path / "out/toy/scripted/i1/seed1/train.log").read_text()
    assert "resumed: the first" in log or "resumed: all" in log


def test_run_directories_can_travel_with_the_cells(local, tmp_path):
    path, expected = local
    root = path.parent / "out"
    shutil.rmtree(root)
    result = _run(path, root, ScriptedEnv(), ship=True)
    assert result.code == 0 and digests(root) == expected


def test_a_stop_file_stops_the_cells_on_ray_and_a_rerun_finishes(local, tmp_path):
    path, expected = local
    grid = write_grid(tmp_path / "grid.toml", ablations='full = {}\ni1 = { selector = "fixed:I1" }\n')
    root = tmp_path / "out"
    stopped = _run(grid, root, StoppingEnv(root / "STOP"), jobs=2)
    assert stopped.code == 3 and any(s.state == "stopped" for s in stopped.statuses)
    (root / "STOP").unlink()
    again = _run(grid, root, ScriptedEnv())
    assert again.code == 0
    wanted = {k: v for k, v in expected.items() if "/rep/" not in k}
    assert digests(root) == wanted
