"""A seal downgrade (`"format": 1` and the seal deleted, the prompt version edited too) is
named as a removed seal: that a run predates seals is proven by its event log, which the
replay recomputes, never by a manifest field. Only a log in the shape of the versions before
seals makes a run "recorded before runs were sealed"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from replay.rundir import seal
from replay.rundir.pre_seal import events_predate_seals
from tests.support.cli import main, record_in_process
from tests.support.legacy import as_before_seals, downgrade_manifest

TRACES = Path(__file__).resolve().parents[1] / "traces"


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> Path:
    return record_in_process(tmp_path_factory.mktemp("downgrade") / "run")


@pytest.fixture
def run(plain, tmp_path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(plain, copy)
    return copy


def _replay(run: Path, capsys) -> tuple[int, str]:
    code = main(["replay", str(run)])
    captured = capsys.readouterr()
    return code, " ".join((captured.out + captured.err).split())


@pytest.mark.parametrize("fields", [{}, {"prompt_version": "3"}],
                         ids=["format only", "format and prompt version"])
def test_a_seal_downgrade_is_detected_from_the_events(run, capsys, fields):
    """With the prompt version edited too, the replay refuses it for that first; view and
    compare (which check the seal alone) still mark it altered, never unchecked."""
    downgrade_manifest(run, **fields)
    code, said = _replay(run, capsys)
    assert code != 0 and "replay OK" not in said, said
    assert "recorded before runs were sealed" not in said
    if not fields:
        assert code == 1 and "seal was removed" in said and "its events show" in said, said
    assert seal.status(run).integrity is seal.Integrity.ALTERED
    assert main(["view", str(run)]) == 0
    assert "check FAILED:" in " ".join(capsys.readouterr().out.split())


def test_a_run_whose_events_predate_seals_is_marked_unchecked(run):
    as_before_seals(run)
    status = seal.status(run)
    assert status.integrity is seal.Integrity.UNSEALED, status
    assert "recorded before runs were sealed" in status.detail


@pytest.mark.parametrize("line", [
    '{"_type": "ExecutionsCharged", "round": 0, "purpose": "feedback", "skill_ids": [], '
    '"new": 0, "reused": 0, "spent": 0, "pairs": []}',  # a field that came with seals
    '{"_type": "MethodStarted"}',  # an event that came later
    "not json",
    '["RunStarted"]',
    '{"_type": ["RunStarted"]}',
])
def test_one_later_line_proves_a_sealing_version(run, line):
    as_before_seals(run)
    events = run / "events.jsonl"
    assert events_predate_seals(events)
    events.write_text(events.read_text() + line + "\n")
    assert not events_predate_seals(events)
    assert seal.status(run).integrity is seal.Integrity.ALTERED


def test_no_log_proves_nothing(run):
    as_before_seals(run)
    (run / "events.jsonl").write_text("")
    assert seal.status(run).integrity is seal.Integrity.ALTERED
    (run / "events.jsonl").unlink()
    assert seal.status(run).integrity is seal.Integrity.ALTERED


@pytest.mark.parametrize("trace", sorted(p.name for p in TRACES.iterdir()
                                         if (p / "events.jsonl").is_file()))
def test_every_committed_trace_is_proven_sealed_by_its_events(trace, tmp_path):
    """Downgrading any committed trace is detected: each log holds a later line."""
    assert not events_predate_seals(TRACES / trace / "events.jsonl")
    copy = tmp_path / trace
    shutil.copytree(TRACES / trace, copy, ignore=shutil.ignore_patterns("cache"))
    downgrade_manifest(copy, prompt_version="3")
    data = json.loads((copy / "manifest.json").read_text())
    assert "seal" not in data
    assert seal.status(copy).integrity is seal.Integrity.ALTERED
