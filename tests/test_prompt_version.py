"""The prompts' version is in every manifest; a run recorded with other prompts is refused by
`replay` (and by a resuming `train`) in one line naming both versions, before any model call,
instead of a cache miss deep in a round."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from replay.models import specs as models
from replay.run import runner, verify
from replay.run.options import RunOptions
from replay.rundir.serde import LEGACY_PROMPT_VERSION, TaskSpec, TraceError, manifest_from_json
from stratune_core.prompts.templates import PROMPT_VERSION
from tests.support.cli import record_in_process, stratune, toy_extensions


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    return record_in_process(tmp_path_factory.mktemp("version") / "run")


def _copy(recorded: Path, tmp_path: Path, version: str | None) -> Path:
    out = tmp_path / "run"
    shutil.copytree(recorded, out)
    data = json.loads((out / "manifest.json").read_text())
    if version is None:
        data.pop("prompt_version")
    else:
        data["prompt_version"] = version
    (out / "manifest.json").write_text(json.dumps(data, indent=2, sort_keys=True))
    return out


def _console() -> Console:
    return Console(file=io.StringIO(), width=100)


def test_a_new_manifest_records_the_current_version(recorded):
    data = json.loads((recorded / "manifest.json").read_text())
    assert data["prompt_version"] == PROMPT_VERSION != LEGACY_PROMPT_VERSION
    with models.using(toy_extensions()):
        assert verify.replay(str(recorded), _console()) == verify.EXIT_OK


def test_a_manifest_without_a_version_is_the_old_prompts():
    old = json.dumps({"task": {"spec": "toy"}, "target": "t", "optimizer": "o", "seed": 0,
                      "config": {}, "format": 1})
    assert manifest_from_json(old).prompt_version == LEGACY_PROMPT_VERSION == "1"


@pytest.mark.parametrize("version", [None, "7"])
def test_replay_of_other_prompts_fails_in_one_line_naming_both(recorded, tmp_path, version):
    run_dir = _copy(recorded, tmp_path, version)
    recorded_as = version or LEGACY_PROMPT_VERSION
    with pytest.raises(TraceError) as caught, models.using(toy_extensions()):
        verify.replay(str(run_dir), _console())
    message = str(caught.value)
    assert "\n" not in message
    assert f"recorded with prompt version {recorded_as}, but this stratune builds prompt " \
           f"version {PROMPT_VERSION}" in message
    done = stratune("replay", str(run_dir))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().count("\n") == 0 and f"prompt version {recorded_as}" in done.stderr


def test_resuming_a_run_of_other_prompts_is_refused(recorded, tmp_path):
    run_dir = _copy(recorded, tmp_path, "1")
    options = RunOptions(task=TaskSpec(spec="toy"), target="scripted:toy-target",
                         optimizer="scripted:toy-optimizer", seed=3)
    with pytest.raises(TraceError, match=r"recorded with prompt version 1, but this stratune"), \
            models.using(toy_extensions()):
        runner.train(options, str(run_dir), _console())


def test_each_baseline_has_its_own_version_and_only_changed_ones_moved():
    """Issue 37 changed TextGrad's, Iter-CoT's and SkillOpt's prompts (version 4): their traces
    recorded under 3 are refused as stale, while GEPA's and Trace2Skill's, whose prompts did not
    change, still match the version their committed traces record."""
    from stratune_core.records.method_spec import SPECS, Method, TextGradMethod
    from stratune_core.round.registry import METHODS, prompt_version_of

    assert {e.spec for e in METHODS.values()} == set(SPECS)
    traces = Path(__file__).resolve().parent.parent / "traces"
    assert prompt_version_of(TextGradMethod()) == METHODS[Method.TEXTGRAD].prompt_version == "4"
    expected = {"demo-gepa": "3", "demo-trace2skill": "3", "demo-iter-cot": "4",
                "demo-skillopt": "4", "demo-textgrad": "4"}
    for name, version in expected.items():
        manifest = manifest_from_json((traces / name / "manifest.json").read_text())
        assert prompt_version_of(manifest.method) == version, name
        if version == "3":
            assert manifest.prompt_version == version, name
