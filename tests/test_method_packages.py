"""A run records the version of every package its method runs through (`gepa` for `--method
gepa` and `--generator gepa`), and `replay` says in one line, without failing, when the
installed version differs; a manifest written before these versions were recorded replays as
before, without a note."""

from __future__ import annotations

import io
import json
import shutil
from importlib import metadata
from pathlib import Path

import pytest
from rich.console import Console

from replay.models import specs as models
from replay.run import runner
from replay.run.package_drift import drift_notes
from replay.rundir import seal
from replay.rundir.trace import RunDir
from stratune_core.records.method_spec import Generator, GepaMethod, StraTuneMethod, TextGradMethod
from tests.support.cli import ROOT, record_in_process, toy_extensions

OTHER = "99.0.0"  # a gepa release no one has installed


def packages(run: Path) -> dict[str, str]:
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    return {p["name"]: p["version"] for p in manifest["packages"]}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("packages")
    methods = {"gepa": GepaMethod(), "gepa-hybrid": StraTuneMethod(generator=Generator.GEPA),
               "textgrad": TextGradMethod(), "stratune": StraTuneMethod()}
    return {name: record_in_process(root / name, seed=4, n_train=24, method=method)
            for name, method in methods.items()}


@pytest.fixture
def other_gepa(tmp_path, monkeypatch):
    """A gepa distribution of another version, found first on sys.path (the imported package
    stays the real one: only the installed version the metadata reports differs)."""
    info = tmp_path / "site" / f"gepa-{OTHER}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: gepa\nVersion: {OTHER}\n",
                                   encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert metadata.version("gepa") == OTHER


def test_a_run_records_the_packages_its_method_runs_through(runs):
    installed = metadata.version("gepa")
    assert packages(runs["gepa"])["gepa"] == installed
    assert packages(runs["gepa-hybrid"])["gepa"] == installed
    assert "gepa" not in packages(runs["textgrad"]) and "gepa" not in packages(runs["stratune"])
    assert all(packages(run)["stratune"] for run in runs.values())  # beside StraTune's own


def _replay(run: Path) -> tuple[int, str]:
    buffer = io.StringIO()
    with models.using(toy_extensions()):  # the scripted specs the runs were recorded with
        code = runner.replay(str(run), Console(file=buffer, width=200))
    return code, buffer.getvalue()


def test_replay_is_silent_when_the_recorded_version_is_installed(runs):
    code, out = _replay(runs["gepa"])
    assert code == runner.EXIT_OK and "note" not in out and "replay OK" in out


@pytest.mark.parametrize("name", ["gepa", "gepa-hybrid"])
def test_replay_names_a_version_that_moved_in_one_line(runs, other_gepa, name):
    code, out = _replay(runs[name])
    assert code == runner.EXIT_OK, out
    notes = [line for line in out.splitlines() if line.startswith("note:")]
    assert len(notes) == 1, out
    assert f"gepa {packages(runs[name])['gepa']}" in notes[0] and f"gepa {OTHER}" in notes[0]
    assert "replay OK" in out


def test_a_method_without_a_package_has_nothing_to_compare(runs, other_gepa):
    code, out = _replay(runs["textgrad"])
    assert code == runner.EXIT_OK and "note" not in out


def test_a_manifest_written_before_the_versions_were_recorded(tmp_path, other_gepa):
    """traces/demo-gepa was recorded without gepa's version: it stays valid and sealed, and its
    replay has nothing to compare (tests/test_demo.py replays it to its digest)."""
    trace = ROOT / "traces" / "demo-gepa"
    assert "gepa" not in packages(trace)
    manifest = RunDir.at(trace).read_manifest()
    assert drift_notes(manifest) == []
    copy = shutil.copytree(trace, tmp_path / "demo-gepa")
    assert seal.status(copy).mark == "sealed"
