"""The Config fields a baseline takes from a --config file: the shared budget and seed, and the
cap on each optimizer reply, which its optimizer calls carry (the demo's baseline recordings set
it); a StraTune-only field is refused in one line naming it."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import TOY_RUN, main


@pytest.mark.parametrize("method", ["gepa", "textgrad", "trace2skill", "skillopt", "iter-cot"])
def test_a_baseline_takes_the_optimizer_reply_cap(tmp_path, capsys, method):
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"optimizer_max_tokens": 700, "seed": 1}))
    assert main(["plan", *TOY_RUN, "--method", method, "--config", str(config)]) == 0
    config.write_text(json.dumps({"optimizer_max_tokens": 700, "max_failures_shown": 6}))
    capsys.readouterr()
    assert main(["plan", *TOY_RUN, "--method", method, "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "max_failures_shown" in err and "optimizer_max_tokens" in err and err[-1] == "\n"


def test_the_demo_baseline_config_is_the_demo_configs_reply_cap():
    from tests.support.cli import ROOT

    demo = json.loads((ROOT / "replay/data/demo/record_config.json").read_text())
    baselines = json.loads((ROOT / "replay/data/demo/record_config_baselines.json").read_text())
    assert baselines == {"optimizer_max_tokens": demo["optimizer_max_tokens"]}
