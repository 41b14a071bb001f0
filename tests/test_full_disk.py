"""A full disk stops `train` with one line and exit 2; nothing recorded is lost, and the same
command resumes the run once there is space, ending identical to an uninterrupted run.

Faults are injected where the run writes (the event log's fsync, the cache's SQLite write), and,
where the test may mount file systems (root), a real 2 MiB tmpfs fills up mid-run.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
from pathlib import Path

import pytest

from llm_cache.store import CacheStore
from tests.support.cli import TOY_RUN, main, record_in_process
from tests.support.disks import remount, tmpfs

TRAIN = ["train", *TOY_RUN, "--seed", "3"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    return record_in_process(tmp_path_factory.mktemp("full") / "reference")


def _after(calls: int, error: BaseException, real):  # noqa: ANN001, ANN202
    count = 0

    def fn(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        nonlocal count
        count += 1
        if count >= calls:
            raise error
        return real(*args, **kwargs)

    return fn


def _run(out: Path, capsys) -> tuple[int, str, str]:
    code = main([*TRAIN, "--out", str(out)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _assert_resumes_identically(out: Path, reference: Path, capsys) -> None:
    code, said, err = _run(out, capsys)
    assert code == 0, err
    assert "resumed" in said
    for name in ("events.jsonl", "final_skill.txt"):
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name
    digest = json.loads((reference / "manifest.json").read_text())["event_digest"]
    assert json.loads((out / "manifest.json").read_text())["event_digest"] == digest


def _assert_one_line(code: int, err: str, *names: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    for name in names:
        assert name in err, err


def test_event_log_on_a_full_disk(tmp_path, reference, capsys, monkeypatch):
    out = tmp_path / "run"
    enospc = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(out / "events.jsonl"))
    monkeypatch.setattr(os, "fsync", _after(12, enospc, os.fsync))
    code, _, err = _run(out, capsys)
    _assert_one_line(code, err, "No space left on device", "run the same command to resume")
    monkeypatch.undo()
    kept = (out / "events.jsonl").read_bytes()
    assert kept and (reference / "events.jsonl").read_bytes().startswith(kept.rsplit(b"\n", 1)[0])
    assert not list(out.rglob("*.tmp"))  # no half-written file left behind
    _assert_resumes_identically(out, reference, capsys)


def test_cache_on_a_full_disk(tmp_path, reference, capsys, monkeypatch):
    out = tmp_path / "run"
    full = sqlite3.OperationalError("database or disk is full")
    monkeypatch.setattr(CacheStore, "put", _after(40, full, CacheStore.put))
    code, _, err = _run(out, capsys)
    _assert_one_line(code, err, "database or disk is full", "cache")
    monkeypatch.undo()
    store = CacheStore(out / "cache")
    assert len(store) == 39  # every answer stored before the failure is kept
    store.close()
    _assert_resumes_identically(out, reference, capsys)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small file system needs root")
def test_a_real_full_disk_then_space_freed(tmp_path, reference, capsys):
    with tmpfs(tmp_path / "disk", "size=2m") as disk:  # fills up in round 2 or 3
        out = disk / "run"
        code, _, err = _run(out, capsys)
        _assert_one_line(code, err, "run the same command to resume")
        assert "full" in err or "No space" in err
        kept = (out / "events.jsonl").read_bytes()
        assert kept.count(b"\n") > 2  # rounds were recorded before the disk filled
        assert (reference / "events.jsonl").read_bytes().startswith(kept.rsplit(b"\n", 1)[0])
        remount(disk, "size=16m")
        _assert_resumes_identically(out, reference, capsys)
