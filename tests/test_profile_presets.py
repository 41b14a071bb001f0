"""Per-profile task presets (the authors' per-dataset values) and
`stratune plan --show-config`: the profile, then the task's preset, then the user's file and
flags, with the layer that set each field."""

from __future__ import annotations

import json

import pytest

from replay.commands import app
from stratune_core.config.layers import Layer, layer_config, preset_layer
from stratune_core.tasks.docvqa import DocVQATask
from stratune_core.tasks.livemath import LiveMathOpusTask, LiveMathTask
from stratune_core.tasks.mind2web import Mind2WebTask
from tests.support import cli

MIND2WEB_RELEASED = {"success_threshold": 0.8, "archive_cap": 8, "final_seats": 3,
                     "reserve": 2400, "ranking_size": 96}


def _config(task, profile: str, *user: Layer):
    return layer_config(profile, [preset_layer(task.NAME, task.preset_for(profile)), *user])


def test_released_presets_hold_the_authors_values_and_the_paper_ones_stay():
    m2w = _config(Mind2WebTask, "released")
    assert {k: getattr(m2w.config, k) for k in MIND2WEB_RELEASED} == MIND2WEB_RELEASED
    assert {m2w.origins[k] for k in MIND2WEB_RELEASED} == {"task mind2web preset"}
    paper = _config(Mind2WebTask, "paper").config
    assert (paper.success_threshold, paper.archive_cap, paper.final_seats) == (None, 4, None)
    assert (paper.reserve, paper.ranking_size) == (None, None)  # solved at the task's 0.9
    for task in (LiveMathTask, LiveMathOpusTask):
        lm_paper, lm_released = _config(task, "paper").config, _config(task, "released").config
        assert (lm_paper.screen_solved, lm_paper.screen_random, lm_paper.max_epochs) == (24, 24, None)
        assert (lm_released.screen_solved, lm_released.max_epochs) == (24, 6)
        assert lm_paper.warmup is None and lm_released.warmup is not None
        assert lm_released.warmup.solved == 24
        assert lm_paper.feedback_global_stats is False
        assert lm_released.feedback_global_stats is (task is LiveMathOpusTask)
    assert DocVQATask.preset_for("released") == {} == DocVQATask.preset_for("paper")


def test_the_users_file_and_flags_still_override_the_preset():
    layered = _config(Mind2WebTask, "released", Layer(where="cfg.json", values={"reserve": 60}),
                      Layer(where="command line", values={"final_seats": 1}))
    assert (layered.config.reserve, layered.config.final_seats) == (60, 1)
    assert (layered.origins["reserve"], layered.origins["final_seats"]) == ("cfg.json",
                                                                           "command line")
    assert layered.config.archive_cap == 8


def _show(capsys, *args: str, main=app.main) -> dict:
    assert main(["plan", *args, "--show-config"]) == 0
    return json.loads(capsys.readouterr().out)


def test_show_config_needs_no_data_for_a_benchmark(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("STRATUNE_DATA", raising=False)
    report = _show(capsys, "--task", "mind2web", "--profile", "released")
    assert report["profile"] == "released" and report["task"] == "mind2web"
    assert {k: report["config"][k] for k in MIND2WEB_RELEASED} == MIND2WEB_RELEASED
    sources = [layer["source"] for layer in report["layers"]]
    assert sources == ["profile released", "task mind2web preset", "command line"]
    assert report["layers"][0]["values"]["validation_min"] == 100
    assert report["layers"][1]["values"] == MIND2WEB_RELEASED
    assert report["source"]["archive_cap"] == "task mind2web preset"
    assert report["source"]["probation"] == "profile released"
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"reserve": 60}))
    user = _show(capsys, "--task", "mind2web", "--profile", "released", "--config", str(cfg),
                 "--max-rounds", "5", "--target", "anthropic:claude-haiku-4-5")
    assert (user["config"]["reserve"], user["source"]["reserve"]) == (60, str(cfg))
    assert (user["config"]["max_rounds"], user["source"]["max_rounds"]) == (5, "command line")
    assert user["source"]["target_model"] == "command line"
    paper = _show(capsys, "--task", "mind2web")
    assert paper["layers"][0]["values"] == {} and paper["layers"][1]["values"] == {}
    assert paper["config"]["success_threshold"] is None and paper["config"]["probation"] is None


def test_show_config_loads_other_tasks_for_their_preset(capsys):
    report = _show(capsys, *cli.TOY_RUN, "--profile", "released", main=cli.main)
    assert report["task"] == "toy" and report["layers"][1] == {"source": "task toy preset",
                                                               "values": {}}
    assert report["config"]["target_model"] == "toy-target"


@pytest.mark.parametrize("missing", [("--target",), ("--optimizer",)])
def test_plan_without_models_asks_for_them(capsys, missing):
    args = ["plan", *cli.TOY_RUN]
    for flag in missing:
        i = args.index(flag)
        del args[i:i + 2]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert f"plan: {missing[0]} required" in err and "\n" not in err.strip()
