"""`stratune grid` on one machine: cells are ordinary run directories, a rerun skips complete
cells and resumes the others, a changed cell is refused, the shared limit and the cost cap hold
across cells, and a stopped grid finishes as an uninterrupted one."""

from __future__ import annotations

import io
import json
import threading
import time
from pathlib import Path

import pytest
from rich.console import Console

from llm_cache.errors import LLMFatalError
from replay.commands.app import main as stratune
from replay.compare.runs import load_runs, method_of
from replay.grid.cells import expand, replay_batch_order
from replay.grid.grid_file import load_grid
from replay.grid.run import GridOptions, plan_lines, run_grid
from replay.grid.spec import GridError
from replay.stops.control import cache_cost
from replay.viewer.show import load_run
from tests.grid_support import ScriptedEnv, digests, write_grid

ABLATIONS = 'full = {}\ni1 = { selector = "fixed:I1" }\nrep = { selector = "replay:full" }\n'
PLAIN = 'full = {}\ni3 = { selector = "fixed:I3" }\nno-valid = { no-validation = true }\n'


def quiet() -> Console:
    return Console(file=io.StringIO(), width=120)


class CountingEnv(ScriptedEnv):
    """Counts model calls over all cells and how many overlap; may touch a file on call N."""

    def __init__(self, touch: Path | None = None, after: int = 0, delay: float = 0.001) -> None:
        super().__init__()
        self.delay = delay
        self.lock = threading.Lock()
        self.calls = self.now = self.peak = 0
        self.touch, self.after = touch, after

    def backends(self, cell):
        backends = super().backends(cell)
        for backend in backends.values():
            backend.fn = self._wrap(backend.fn)
        return backends

    def _wrap(self, fn):
        def counted(request):
            with self.lock:
                self.calls += 1
                self.now += 1
                self.peak = max(self.peak, self.now)
                if self.touch is not None and self.calls == self.after:
                    self.touch.touch()
            time.sleep(self.delay)  # long enough for calls of different cells to overlap
            with self.lock:
                self.now -= 1
            return fn(request)
        return counted


class FailingEnv(ScriptedEnv):
    """Every model call of the cells of one ablation fails for good."""

    def __init__(self, ablation: str) -> None:
        super().__init__()
        self.ablation = ablation

    def backends(self, cell):
        backends = super().backends(cell)
        if cell.ablation == self.ablation:
            for backend in backends.values():
                backend.fn = _refuse
        return backends


def _refuse(request):
    raise LLMFatalError("HTTP 401 authentication_error: invalid x-api-key")


@pytest.fixture(scope="module")
def grid(tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("grid")
    path = write_grid(base / "grid.toml", ablations=ABLATIONS)
    result = run_grid(load_grid(path), base / "out", quiet(), env=ScriptedEnv())
    assert result.code == 0 and result.stopped is None
    return path, base / "out"


def test_each_cell_is_an_ordinary_run_directory(grid):
    _, root = grid
    cells = sorted(str(p.parent.relative_to(root)) for p in root.rglob("grid_cell.json"))
    assert cells == [f"toy/scripted/{a}/seed{s}" for a in ("full", "i1", "rep") for s in (0, 1)]
    for cell in cells:
        manifest = json.loads((root / cell / "manifest.json").read_text())
        assert manifest["finished"] and (root / cell / "evaluation.json").is_file()
        assert json.loads((root / cell / "grid_cell.json").read_text())["id"] == cell
    assert load_run(root / "toy/scripted/full/seed0").view.finished is not None


def test_a_replay_cell_follows_the_full_cell_of_its_seed(grid):
    _, root = grid
    for seed in (0, 1):
        full = [json.loads(line) for line in
                (root / f"toy/scripted/full/seed{seed}/events.jsonl").read_text().splitlines()]
        wanted = [e["strategy"] for e in full if e["_type"] == "OperatorChosen"]
        manifest = json.loads((root / f"toy/scripted/rep/seed{seed}/manifest.json").read_text())
        assert manifest["replay_sequence"] == wanted
        assert manifest["config"]["selector"] == f"replay:{root / f'toy/scripted/full/seed{seed}'}"


def _first_batches(run: Path) -> list[tuple[str, ...]]:
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    return [tuple(e["sample_ids"]) for e in events if e["_type"] == "BatchExecuted"]


def test_a_replay_cell_sees_another_batch_order_and_says_which(grid):
    """Paper §4.1: Replay is a new run with a different order of training batches. The grid's
    replay cell has the seed of the cell it follows, so it gets a batch order of its own; the
    manifest names the run it follows and both orders, and compare labels the row 'Replay'."""
    _, root = grid
    for seed in (0, 1):
        full, rep = root / f"toy/scripted/full/seed{seed}", root / f"toy/scripted/rep/seed{seed}"
        manifest = json.loads((rep / "manifest.json").read_text())
        order = manifest["config"]["batch_order_seed"]
        assert order == replay_batch_order(seed) != seed
        assert manifest["replay_of"] == {"run": str(full), "recorded_batch_order": seed,
                                         "batch_order": order}
        assert json.loads((full / "manifest.json").read_text())["replay_of"] is None
        followed, replayed = _first_batches(full), _first_batches(rep)
        assert followed and replayed and followed[0] != replayed[0]
    labels = {run.coords["ablation"]: method_of(run) for run in load_runs([root])}
    assert labels["rep"] == "Replay"


def test_a_rerun_skips_complete_cells_without_a_model_call(grid):
    path, root = grid
    before = digests(root)
    env = CountingEnv()
    result = run_grid(load_grid(path), root, quiet(), env=env)
    assert result.code == 0 and {s.state for s in result.statuses} == {"skipped"}
    assert env.calls == 0 and digests(root) == before


def test_a_changed_cell_definition_is_refused_naming_the_cell(grid, tmp_path):
    _, root = grid
    changed = write_grid(tmp_path / "grid.toml", ablations=ABLATIONS.replace("fixed:I1", "fixed:I2"))
    with pytest.raises(GridError, match=r"cell toy/scripted/i1/seed0: .*config fields: selector"):
        run_grid(load_grid(changed), root, quiet(), env=ScriptedEnv())


def test_a_stopped_grid_reruns_to_the_uninterrupted_result(tmp_path):
    path = write_grid(tmp_path / "grid.toml", ablations=PLAIN)
    reference = run_grid(load_grid(path), tmp_path / "ref", quiet(), env=ScriptedEnv())
    assert reference.code == 0
    root = tmp_path / "out"
    env = CountingEnv(touch=root / "STOP", after=40)  # both running cells mid-run
    stopped = run_grid(load_grid(path), root, quiet(), env=env, options=GridOptions(jobs=2))
    assert stopped.code == 3 and stopped.stopped == f"{root / 'STOP'} exists"
    states = {s.state for s in stopped.statuses}
    assert "stopped" in states and "pending" in states  # running cells stopped, no new ones
    assert all("exists (stopped after round" in s.message for s in stopped.statuses
               if s.state == "stopped")
    (root / "STOP").unlink()
    again = run_grid(load_grid(path), root, quiet(), env=ScriptedEnv())
    assert again.code == 0
    assert digests(root) == digests(tmp_path / "ref")


def test_one_connection_limit_holds_across_all_cells(tmp_path):
    path = write_grid(tmp_path / "grid.toml", ablations=PLAIN, extra="[max_connections]\n"
                      "anthropic = 2\n")
    env = CountingEnv()
    assert run_grid(load_grid(path), tmp_path / "out", quiet(), env=env).code == 0
    assert env.peak == 2
    unlimited = CountingEnv()
    free = write_grid(tmp_path / "free.toml", ablations=PLAIN)
    assert run_grid(load_grid(free), tmp_path / "free", quiet(), env=unlimited).code == 0
    assert unlimited.peak > 2  # without the limit the six cells do overlap more


def test_a_failed_cell_says_why_in_the_grid_s_status(tmp_path):
    path = write_grid(tmp_path / "grid.toml", ablations=PLAIN)
    result = run_grid(load_grid(path), tmp_path / "out", quiet(), env=FailingEnv("i3"))
    failed = [s for s in result.statuses if s.state == "failed"]
    assert failed and {s.id.split("/")[2] for s in failed} == {"i3"}
    assert all(s.message.startswith("model call failed") and "invalid x-api-key" in s.message
               for s in failed), [s.message for s in failed]


def test_the_cost_cap_covers_the_whole_grid(tmp_path):
    models = {"target": "anthropic:claude-haiku-4-5", "optimizer": "anthropic:claude-sonnet-4-6"}
    path = write_grid(tmp_path / "grid.toml", ablations=PLAIN, **models)
    reference = run_grid(load_grid(path), tmp_path / "ref", quiet(), env=ScriptedEnv())
    caches = lambda root: [p for p in root.rglob("cache") if p.is_dir()]  # noqa: E731
    total = cache_cost(caches(tmp_path / "ref"))
    root = tmp_path / "out"
    capped = run_grid(load_grid(path), root, quiet(), env=ScriptedEnv(),
                      options=GridOptions(max_cost=0.3))
    assert capped.code == 3 and capped.stopped == "--max-cost reached"
    assert any("--max-cost cap $0.30" in s.message for s in capped.statuses)
    assert 0 < cache_cost(caches(root)) <= 0.3 and cache_cost(caches(root)) < total
    done = run_grid(load_grid(path), root, quiet(), env=ScriptedEnv(),
                    options=GridOptions(max_cost=total + 2.0))
    assert done.code == 0 and reference.code == 0
    assert digests(root) == digests(tmp_path / "ref")


GOOD = ("seeds = 1\n[tasks.t]\ntask = 'demo'\nlimit = 12\n[pairs.p]\ntarget = 'anthropic:a'\n"
        "optimizer = 'anthropic:b'\n[ablations]\nfull = {}\n")
PAIR = "[pairs.p]\ntarget = 'anthropic:a'\noptimizer = 'anthropic:b'\n"
BAD = [
    ((PAIR, ""), "pairs: the grid needs at least one entry in [pairs]"),
    (("seeds = 1", "colour = 1"), "unknown key 'colour' in the top level"),
    (("seeds = 1", "seeds = 'three'"), "seeds: expected a count"),
    (("seeds = 1", "seeds = [1, 1]"), "seeds: expected a count"),
    (("seeds = 1", "seeds = "), "not valid TOML"),
    (("seeds = 1", "seeds = 1\nbudget = 'lots'"), "budget: --budget: 'lots' is neither"),
    (("seeds = 1", "seeds = 1\n[max_connections]\nanthropic = 0"),
     "max_connections.anthropic: expected a positive integer"),
    (("task = 'demo'\n", ""), "tasks.t.task: required"),
    (("limit = 12", "size = 3"), "unknown key 'size' in [tasks.t]"),
    (("task = 'demo'", "task = 'nosuch'"), "tasks.t: task: unknown task 'nosuch'"),
    (("optimizer = 'anthropic:b'\n", ""), "pairs.p.optimizer: required"),
    (("target = 'anthropic:a'", "target = 'nonsense'"), "pairs.p: model spec 'nonsense'"),
    (("full = {}", "bad = { selectr = 'llm' }"), "ablations.bad.selectr: not a Config field"),
    (("full = {}", "bad = { seed = 3 }"), "ablations.bad.seed: not a Config field"),
    (("full = {}", "bad = { no-history = 1 }"), "ablations.bad.no-history: a flag takes `true`"),
    (("full = {}", "r = { selector = 'replay:nothing' }"), "ablations.r.selector: replay:nothing"),
    (("full = {}", "'a b' = {}"), "ablations.a b: names may use"),
    (("full = {}", "odd = { selector = 'sometimes' }"),
     "ablations.odd with pairs.p: selector: unknown value 'sometimes'"),
]


@pytest.mark.parametrize(("change", "message"), BAD)
def test_a_bad_grid_file_is_an_exit_2_error_naming_the_key(tmp_path, capsys, change, message):
    path = tmp_path / "grid.toml"
    path.write_text(GOOD.replace(*change), encoding="utf-8")
    assert stratune(["grid", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: ") and message in err, err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_the_plan_lists_the_cells_and_their_state(grid):
    path, root = grid
    cells = expand(load_grid(path), root)
    (root / "toy/scripted/i1/seed0/manifest.json").rename(root / "moved.json")
    try:
        lines = plan_lines(cells, root)
    finally:
        (root / "moved.json").rename(root / "toy/scripted/i1/seed0/manifest.json")
    assert "finished toy/scripted/rep/seed1 (after toy/scripted/full/seed1)" in lines
    assert "new      toy/scripted/i1/seed0" in lines


def test_a_grid_timeout_stops_every_cell_and_starts_no_more(tmp_path):
    path = write_grid(tmp_path / "grid.toml", ablations=PLAIN)
    result = run_grid(load_grid(path), tmp_path / "out", quiet(), env=ScriptedEnv(),
                      options=GridOptions(timeout="0.01s", jobs=2))
    assert result.code == 3 and result.stopped == "--timeout 0.01s"
    assert {s.state for s in result.statuses} <= {"stopped", "pending"}
    assert all("--timeout 0.01s reached" in s.message for s in result.statuses
               if s.state == "stopped")


def test_ctrl_c_stops_the_running_cells_resumably(tmp_path):
    from replay.grid.cells import expand
    from replay.grid.driver import drive
    from replay.grid.limits import GridLimits
    from replay.grid.live import Board
    from replay.grid.local import LocalExecutor
    from replay.stops.control import StopControl

    path = write_grid(tmp_path / "grid.toml", ablations=PLAIN)
    root = (tmp_path / "out").resolve()
    cells = expand(load_grid(path), root)
    board = Board(c.id for c in cells)
    limits = GridLimits({}, StopControl.for_run(root))
    executor = LocalExecutor(root, CountingEnv(delay=0.02), limits, board, jobs=2)
    presses = []

    def ctrl_c_once() -> None:
        if not presses:
            presses.append(1)
            raise KeyboardInterrupt

    try:
        results, stopped = drive(cells, executor, board, jobs=2, refresh=ctrl_c_once)
    finally:
        executor.close()
    assert stopped == "interrupted"
    states = [results[c.id].state for c in cells]
    assert states.count("stopped") == 2 and states.count("pending") == 4
    assert all("interrupted" in results[c.id].message for c in cells
               if results[c.id].state == "stopped")
    assert run_grid(load_grid(path), root, quiet(), env=ScriptedEnv()).code == 0


def test_the_cells_share_one_trace_converter(tmp_path, monkeypatch):
    """Cells starting together would each build the cached converter (and have cattrs generate
    every hook again for it); the executor builds it once before they start."""
    import stratune_core.config.serde as serde
    from replay.rundir import serde as trace_serde

    builds = []
    real = serde.make_converter

    def counted(*args, **kwargs):
        builds.append(threading.current_thread().name)
        time.sleep(0.05)  # a slow build: without the warm-up every cell would be inside it
        return real(*args, **kwargs)

    monkeypatch.setattr(trace_serde, "make_converter", counted)
    trace_serde.trace_converter.cache_clear()
    try:
        path = write_grid(tmp_path / "grid.toml", ablations=PLAIN)
        result = run_grid(load_grid(path), tmp_path / "out", quiet(), env=ScriptedEnv())
    finally:
        trace_serde.trace_converter.cache_clear()  # the counted build must not outlive the test
    assert result.code == 0
    assert builds == [threading.current_thread().name]


class ThreadSpyEnv(CountingEnv):
    """Notes, at every model call, how many rich refresh threads are alive."""

    def __init__(self) -> None:
        super().__init__()
        self.refreshing: set[int] = set()

    def _wrap(self, fn):
        counted = super()._wrap(fn)

        def spied(request):
            self.refreshing.add(sum(type(t).__name__ == "_RefreshThread"
                                    for t in threading.enumerate()))
            return counted(request)
        return spied


@pytest.mark.parametrize("terminal", [False, True])
def test_live_displays_run_only_on_a_terminal(tmp_path, terminal):
    """The grid's table and the cells' budget bars are transient: on a console that is not a
    terminal they would be rendered by refresh threads and never shown."""
    env = ThreadSpyEnv()
    path = write_grid(tmp_path / "grid.toml", ablations=PLAIN)
    out = io.StringIO()
    console = Console(file=out, width=120, force_terminal=terminal)
    result = run_grid(load_grid(path), tmp_path / "out", console, env=env)
    assert result.code == 0 and env.calls
    if terminal:
        assert min(env.refreshing) >= 1  # the grid's table at least
    else:
        assert env.refreshing == {0}
    assert "stratune compare" in out.getvalue()  # the closing table and line either way
