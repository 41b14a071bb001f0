"""Every selector (and the other ablation values) round-trips through the manifest, spelt as on
the command line, and the recorded demo trace's manifest still loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.rundir.serde import (
    RULES_ADDED_LATER,
    Manifest,
    TaskSpec,
    manifest_from_json,
    manifest_to_json,
)
from stratune_core.config.knobs import Config
from stratune_core.records.enums import FormMenu
from stratune_core.selection.selectors.adaptive import LLMSelector
from stratune_core.selection.selectors.registry import SELECTORS
from stratune_core.selection.selectors.scripted import ReplaySequence
from tests.test_flat_manifests import flat

# the demo trace's manifest as first recorded (flat config, no method, no stop rule), kept when
# the trace was recorded again
DEMO = Path(__file__).resolve().parent / "data" / "legacy_manifests" / "demo.json"
EXAMPLES = [s for cls in SELECTORS for s in cls.examples()]


def _manifest(config: Config) -> Manifest:
    selector = config.selector
    sequence = selector.strategies if isinstance(selector, ReplaySequence) else ()
    return Manifest(task=TaskSpec(spec="demo"), target="t", optimizer="o", seed=config.seed,
                    config=config, replay_sequence=sequence)


@pytest.mark.parametrize("selector", EXAMPLES, ids=str)
def test_every_selector_round_trips_through_the_manifest(selector):
    manifest = _manifest(Config(selector=selector))
    text = manifest_to_json(manifest)
    data = json.loads(text)
    assert data["config"]["selector"] == str(selector)  # the command-line spelling
    back = manifest_from_json(text)
    assert back.config.selector == selector
    assert back == manifest
    assert manifest_to_json(back) == text


def test_a_replay_selector_keeps_its_sequence_beside_the_config():
    selector = next(s for s in EXAMPLES if isinstance(s, ReplaySequence))
    data = json.loads(manifest_to_json(_manifest(Config(selector=selector))))
    assert data["config"]["selector"] == f"replay:{selector.trace}"
    assert data["replay_sequence"] == [None if s is None else s.value for s in selector.strategies]
    assert None in data["replay_sequence"]  # a round the recorded run chose nothing in


@pytest.mark.parametrize(("operator", "forms"), [("I3+F1", "all"), ("I2+F4", "F4"), (None, "F4")])
def test_operator_and_forms_round_trip(operator, forms):
    manifest = _manifest(Config(operator=operator, forms=forms))
    data = json.loads(manifest_to_json(manifest))
    assert (data["config"]["operator"], data["config"]["forms"]) == (operator, forms)
    assert manifest_from_json(manifest_to_json(manifest)) == manifest


def test_the_demo_manifest_still_loads():
    text = DEMO.read_text(encoding="utf-8")
    manifest = manifest_from_json(text)
    config = manifest.config
    assert config.selector == LLMSelector() and config.forms is FormMenu.ALL
    assert config.operator is None and manifest.replay_sequence == ()
    recorded = json.loads(text)
    again = json.loads(manifest_to_json(manifest))
    # Nothing lost or renamed; fields added since the recording take their defaults, but a
    # stop rule added since is off (a manifest without a prompt version was made by the
    # prompts before version 2).
    assert {k: again[k] for k in recorded if k != "config"} == {
        k: v for k, v in recorded.items() if k != "config"}
    # the released mechanisms are records now: compared in the flat spelling it was written in
    config = flat(again["config"])
    assert {k: config[k] for k in recorded["config"]} == recorded["config"]
    defaults = flat(json.loads(manifest_to_json(_manifest(Config())))["config"])
    for key in config.keys() - recorded["config"].keys():
        expected = RULES_ADDED_LATER[key] if key in RULES_ADDED_LATER else defaults[key]
        assert config[key] == expected, key
    assert again.get("prompt_version") == recorded.get("prompt_version", "1")
