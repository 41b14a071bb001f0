"""Stop controls for `train`: a STOP file, --timeout and --max-cost each stop the run with one
line saying why and how to continue; continuing ends in the run an uninterrupted one records."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from benchmarks.common import ToyResponder
from llm_cache.testing.fake_server import FakeAnthropicServer
from replay.commands.app import main as stratune
from replay.run import runner
from replay.run.hooks import TrainHooks
from replay.run.options import RunOptions
from replay.rundir.serde import TaskSpec
from replay.stops.control import StopControl, cache_cost, parse_cost, parse_duration
from stratune_core.records.errors import ConfigError
from tests.grid_support import OPTIMIZER, TARGET, ScriptedEnv

ROOT = Path(__file__).resolve().parents[1]
WORDS = ROOT / "examples" / "grid" / "words"
OPTIONS = RunOptions(task=TaskSpec(spec="toy", limit=36), target=TARGET, optimizer=OPTIMIZER,
                     seed=4)


class Calls:
    """A clock that advances one second per paid target call."""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> float:
        return float(self.n)


def _train(out: Path, *observers, gate=None, counter: Calls | None = None) -> tuple[int, str]:
    env = ScriptedEnv()
    backends = env.backends(None)
    if counter is not None:
        target = backends[next(iter(backends))]
        inner = target.fn

        def counted(request):
            counter.n += 1
            return inner(request)

        target.fn = counted
    buffer = io.StringIO()
    hooks = TrainHooks(backends=backends, task=env.task(_Cell()), gate=gate, observers=observers)
    code = runner.train(OPTIONS, out, Console(file=buffer, width=200), hooks=hooks)
    return code, buffer.getvalue()


class _Cell:
    class options:  # noqa: N801  (stands in for a grid cell's options)
        task = OPTIONS.task


def _outcome(out: Path) -> tuple[str, list[str], str]:
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["finished"]
    return (manifest["event_digest"], (out / "events.jsonl").read_text().splitlines(),
            (out / "final_skill.txt").read_text())


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[str, list[str], str]:
    out = tmp_path_factory.mktemp("ref") / "run"
    code, _ = _train(out)
    assert code == runner.EXIT_OK
    return _outcome(out)


class TouchAfter:
    def __init__(self, path: Path, rounds: int) -> None:
        self.path, self.rounds = path, rounds

    def after_round(self, state, events, accounting) -> None:
        if state.round == self.rounds:
            self.path.touch()


def test_a_stop_file_stops_at_the_round_boundary_and_the_rerun_continues(tmp_path, reference):
    out = tmp_path / "run"
    stop = StopControl.for_run(out)
    code, text = _train(out, TouchAfter(out / "STOP", 2), stop)
    assert code == runner.EXIT_STOPPED
    line = " ".join(text.split())
    assert f"stopped: {out / 'STOP'} exists (stopped after round 2); remove it (rm {out / 'STOP'})" \
           " and run the same command again to continue" in line
    kept = (out / "events.jsonl").read_text().splitlines()
    assert json.loads(kept[-1])["round"] == 1 and not json.loads(
        (out / "manifest.json").read_text())["finished"]
    code, text = _train(out, StopControl.for_run(out))  # STOP still there: stops at once
    assert code == runner.EXIT_STOPPED and "before round 1" in text
    assert (out / "events.jsonl").read_text().splitlines() == kept
    (out / "STOP").unlink()
    code, text = _train(out, StopControl.for_run(out))
    assert code == runner.EXIT_OK
    assert _outcome(out) == reference


def test_a_timeout_stops_within_a_round_and_a_rerun_finishes_the_same_run(tmp_path, reference):
    out = tmp_path / "run"
    counter = Calls()
    stop = StopControl([out / "STOP"], deadline=30.0, timeout_text="30s", clock=counter)
    code, text = _train(out, stop, gate=stop, counter=counter)
    assert code == runner.EXIT_STOPPED
    assert "--timeout 30s reached (stopped within a round); run the same command again" in text
    assert counter.n == 30  # the 31st call was refused before it went out
    code, _ = _train(out)
    assert code == runner.EXIT_OK and _outcome(out) == reference


@pytest.mark.parametrize(("text", "seconds"), [("90", 90), ("90s", 90), ("30m", 1800),
                                               ("2h", 7200), ("1h30m", 5400), ("1.5d", 129600)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "5x", "0", "-3m", "1h 30m"])
def test_bad_durations_name_the_flag(text):
    with pytest.raises(ConfigError, match="--timeout"):
        parse_duration(text)


def test_costs():
    assert parse_cost("$2.50") == 2.5
    with pytest.raises(ConfigError, match="--max-cost"):
        parse_cost("lots")


def _cli_train(out: Path, *extra: str) -> list[str]:
    return ["train", "--task", str(WORDS), "--scorer", "regex", "--target",
            "anthropic:claude-haiku-4-5", "--optimizer", "anthropic:claude-sonnet-4-6",
            "--out", str(out), *extra]


def test_max_cost_through_the_real_sdk_stops_under_the_cap_and_resumes(tmp_path, monkeypatch,
                                                                        capsys):
    with FakeAnthropicServer(responder=ToyResponder()) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
        monkeypatch.setenv("COLUMNS", "250")
        assert stratune(_cli_train(tmp_path / "free")) == 0
        full_cost = cache_cost([tmp_path / "free" / "cache"])
        capsys.readouterr()
        capped = tmp_path / "capped"
        assert stratune(_cli_train(capped, "--max-cost", "0.27")) == runner.EXIT_STOPPED
        said = " ".join(capsys.readouterr().out.split())
        assert "would pass the --max-cost cap $0.27 with the next call" in said
        assert "rerun the same command with a higher --max-cost to continue" in said
        paid = cache_cost([capped / "cache"])
        assert 0 < paid <= 0.27 and paid < full_cost
        assert stratune(_cli_train(capped, "--max-cost", "0.27")) == runner.EXIT_STOPPED
        assert cache_cost([capped / "cache"]) == pytest.approx(paid)  # nothing more was paid
        assert stratune(_cli_train(capped, "--max-cost", "50")) == 0
    assert _outcome(capped)[:2] == _outcome(tmp_path / "free")[:2]
    assert cache_cost([capped / "cache"]) == pytest.approx(full_cost)
