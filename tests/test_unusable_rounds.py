"""An optimizer that never writes a usable candidate is noticed early: after
`max_unusable_rounds` rounds in a row whose every candidate was refused before evaluation, the
run stops with its own reason, says what to do, and `plan` warns of it for a local optimizer.
Runs recorded before the rule read it as off, so their replays are unchanged."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

import stratune_core.state.events as ev
from llm_cache.records import CallKind, Request, Response, Role, Usage
from replay.plan.estimate import make_plan, render_plan
from replay.rundir.serde import manifest_from_json
from stratune_core.config.knobs import Config
from stratune_core.records.enums import Reason, StopReason, Strategy
from stratune_core.round.run import run
from stratune_core.round.step import unusable_rounds_after
from tests.support.cli import main, record_in_process
from tests.support.toy import InProcessLLM, ToyOptimizer, ToyTask

NONSENSE = "I am a small model and I like turtles."


class _Nonsense:
    """Valid strategy choices, nonsense for every candidate (and for its repair)."""

    def __init__(self) -> None:
        self.base = ToyOptimizer(style="good")

    def __call__(self, request: Request) -> Response:
        if request.kind is CallKind.CANDIDATE_GENERATION:
            return Response(text=NONSENSE, usage=Usage(input_tokens=1, output_tokens=1))
        return self.base(request)


def _run(**config: object) -> tuple[list[ev.Event], InProcessLLM]:
    llm = InProcessLLM(optimizer=_Nonsense())
    result = run(Config(seed=1, **config), ToyTask(), llm)
    return list(result.events), llm


def test_a_useless_optimizer_stops_the_run_after_three_rounds():
    events, llm = _run()
    finished = events[-1]
    assert isinstance(finished, ev.RunFinished)
    assert finished.reason is StopReason.NO_USABLE_CANDIDATES
    refused_rounds = {e.round for e in events if isinstance(e, ev.CandidateInvalid)}
    assert len(refused_rounds) == 3
    assert not any(isinstance(e, ev.CandidateGenerated) for e in events)
    assert finished.spent < finished.budget  # the budget rule did not end it
    optimizer = [r for r in llm.calls if r.role is Role.OPTIMIZER]
    unlimited, unlimited_llm = _run(max_unusable_rounds=None)
    assert unlimited[-1].reason is not StopReason.NO_USABLE_CANDIDATES
    assert len([r for r in unlimited_llm.calls if r.role is Role.OPTIMIZER]) > 2 * len(optimizer)


@pytest.mark.parametrize("limit", [1, 5])
def test_the_number_of_rounds_is_a_config_field(limit):
    events, _ = _run(max_unusable_rounds=limit)
    assert events[-1].reason is StopReason.NO_USABLE_CANDIDATES
    assert len({e.round for e in events if isinstance(e, ev.CandidateInvalid)}) == limit


def _invalid(reason: Reason) -> ev.CandidateInvalid:
    return ev.CandidateInvalid(round=0, strategy=Strategy.I1, form=None, reason=reason)


def test_what_counts_as_a_round_without_a_usable_candidate():
    generated = ev.CandidateGenerated(round=0, candidate_id="c", parent_id="p",
                                      strategy=Strategy.I1, form=None)
    assert unusable_rounds_after(2, (_invalid(Reason.UNPARSEABLE),)) == 3
    assert unusable_rounds_after(2, (_invalid(Reason.INVALID_PATCH), generated)) == 0
    # a well-formed candidate that repeats an earlier one says nothing about the format
    assert unusable_rounds_after(2, (_invalid(Reason.DUPLICATE),)) == 2
    assert unusable_rounds_after(2, ()) == 2


def test_the_stop_says_what_to_do_in_train_and_view(tmp_path, capsys):
    """Through the command: the stop's reason and its advice, in train's output and in view."""
    out = tmp_path / "run"
    argv = ["train", "--task", "toy", "--target", "scripted:toy-target", "--optimizer",
            "scripted:toy-optimizer?style=nonsense", "--out", str(out)]
    assert main(argv) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "finished (no_usable_candidates)" in said and "stronger optimizer" in said
    assert main(["view", str(out)]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "stop: no_usable_candidates" in shown and "stronger optimizer" in shown
    assert main(["replay", str(out)]) == 0


def test_plan_warns_of_it_for_a_local_optimizer():
    task = ToyTask()
    local = make_plan(Config(optimizer_model="gguf:smollm2@reset"), task)
    assert any("local model" in w and "3 rounds" in w for w in local.warnings)
    off = make_plan(Config(optimizer_model="gguf:smollm2@reset", max_unusable_rounds=None), task)
    assert any("max_unusable_rounds is off" in w for w in off.warnings)
    hosted = make_plan(Config(optimizer_model="claude-sonnet-4-6"), task)
    assert not any("local model" in w for w in hosted.warnings)
    console = Console(file=io.StringIO(), width=200)
    console.print(render_plan(local, Config(optimizer_model="gguf:smollm2@reset")))
    assert "warning: the optimizer gguf:smollm2@reset is a local model" in console.file.getvalue()


LEGACY = Path(__file__).resolve().parent / "data" / "legacy_manifests"


@pytest.mark.parametrize("trace", ["demo", "demo-i1-only", "demo-f4-only"])
def test_a_run_recorded_before_the_rule_reads_it_as_off(trace):
    """The demo traces' manifests as first recorded, before the rule existed."""
    text = (LEGACY / f"{trace}.json").read_text(encoding="utf-8")
    assert "max_unusable_rounds" not in text
    assert manifest_from_json(text).config.max_unusable_rounds is None


def test_a_new_run_records_the_rule(tmp_path):
    out = record_in_process(tmp_path / "run")
    config = json.loads((out / "manifest.json").read_text())["config"]
    assert config["max_unusable_rounds"] == 3
