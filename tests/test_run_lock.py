"""One run per directory: two `train` on one `--out` never both run; readers of a run being
written change nothing; a command that spent nothing never blocks the corrected one; a rerun of
a finished run that is interrupted leaves it finished."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llm_cache.store import CacheStore
from replay.rundir.lock import RunLock, RunLocked
from stratune_core.records.errors import StraTuneError
from tests.support.cli import ROOT, TOY_RUN, record_in_process, stratune

TRAIN = ("train", *TOY_RUN, "--seed", "3")


def _snapshot(directory: Path) -> dict[str, tuple[int, int]]:
    """Sizes and times of every file, except SQLite's shared-memory index: a reader of a live
    write-ahead log takes its read marks there, which is how SQLite readers coexist with a
    writer (it holds no data)."""
    return {str(p.relative_to(directory)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(directory.rglob("*")) if p.is_file() and not p.name.endswith("-shm")}


def _wait_for(path: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def test_the_lock_names_its_holder_and_is_free_again_after_release(tmp_path):
    held = RunLock.acquire(tmp_path)
    with pytest.raises(RunLocked) as caught:
        RunLock.acquire(tmp_path)
    assert f"(pid {os.getpid()})" in str(caught.value) and "\n" not in str(caught.value)
    held.release()
    RunLock.acquire(tmp_path).release()
    assert (tmp_path / ".lock").read_text() == ""  # no stale pid left behind


def test_a_killed_holder_leaves_no_stale_lock(tmp_path):
    code = ("import sys, time; from pathlib import Path; from replay.rundir.lock import RunLock; "
            "RunLock.acquire(Path(sys.argv[1])); print('locked', flush=True); time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    with pytest.raises(RunLocked, match=f"pid {holder.pid}"):
        RunLock.acquire(tmp_path)
    holder.kill()
    holder.wait()
    RunLock.acquire(tmp_path).release()  # the OS released it with the process


@pytest.mark.slow
def test_two_trains_on_one_directory_run_once(tmp_path):
    """Both start at the same moment: one runs, the other is refused at once with the holder's
    pid and exit 2; readers look at the held run without changing it; the run that went on
    ends identical to an uninterrupted one and paid for each call once."""
    reference = record_in_process(tmp_path / "reference")
    out, hold = tmp_path / "run", tmp_path / "hold"
    hold.write_text("")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100",
           "STRATUNE_TEST_HOLD": str(hold), "STRATUNE_TEST_HOLD_AT": "5"}
    command = [sys.executable, "-m", "tests.support.cli", *TRAIN, "--out", str(out)]
    procs = [subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        _wait_for(hold.with_name("hold.waiting"))
        winner_pid = int(hold.with_name("hold.waiting").read_text())
        loser = next(p for p in procs if p.pid != winner_pid)
        _, err = loser.communicate(timeout=60)
        assert loser.returncode == 2, err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert f"another `stratune train` (pid {winner_pid}) is writing this run" in err

        before = _snapshot(out)
        view = stratune("view", str(out))
        assert view.returncode == 0 and "run not finished" in view.stdout
        cache = stratune("cache", "stats", "--cache-dir", str(out / "cache"))
        assert cache.returncode == 0 and "entries" in cache.stdout, cache.stderr
        replayed = stratune("replay", str(out))
        assert replayed.returncode == 2 and "did not finish" in replayed.stderr
        assert _snapshot(out) == before  # the readers wrote nothing

        hold.unlink()
        winner = next(p for p in procs if p.pid == winner_pid)
        out_text, err = winner.communicate(timeout=120)
        assert winner.returncode == 0, err
    finally:
        hold.unlink(missing_ok=True)
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert (out / "events.jsonl").read_bytes() == (reference / "events.jsonl").read_bytes()
    assert (out / "final_skill.txt").read_text() == (reference / "final_skill.txt").read_text()
    paid = json.loads((out / "usage.json").read_text())["total"]
    assert paid["paid_calls"] == paid["calls"] > 0 and paid["cache_hits"] == 0  # each paid once


def test_a_command_that_spent_nothing_does_not_block_the_corrected_one(tmp_path):
    out = tmp_path / "run"
    refused = stratune(*TRAIN, "--budget", "5", "--out", str(out))
    assert refused.returncode == 2 and "raise --budget" in refused.stderr
    assert not (out / "manifest.json").exists()
    # An older version wrote the manifest before failing: no events and no cached call mean
    # nothing was spent, so the directory is free for the corrected command.
    out.mkdir(exist_ok=True)
    (out / "manifest.json").write_text(
        (Path(record_in_process(tmp_path / "other", seed=9)) / "manifest.json").read_text())
    fixed = stratune(*TRAIN, "--budget", "300", "--out", str(out))
    assert fixed.returncode == 0, fixed.stderr
    assert json.loads((out / "manifest.json").read_text())["finished"] is True
    # Once something was spent, another command is still refused.
    again = stratune(*TRAIN[:-1], "4", "--out", str(out))
    assert again.returncode == 2 and "holds a different run: config, seed differ" in again.stderr


def test_an_interrupted_rerun_of_a_finished_run_leaves_it_finished(tmp_path):
    out = record_in_process(tmp_path / "run")
    manifest = (out / "manifest.json").read_text()
    store = CacheStore(out / "cache")  # forget the last calls: the rerun pays for them again
    for key in list(store.keys())[-5:]:
        store.delete(key)
    store.close()
    stopped = stratune(*TRAIN, "--out", str(out), STRATUNE_TEST_INTERRUPT_AFTER="1")
    assert stopped.returncode == 130, stopped.stdout + stopped.stderr
    assert (out / "manifest.json").read_text() == manifest
    assert json.loads(manifest)["finished"] is True
    missing = stratune("replay", str(out))  # honest: the calls forgotten above are missing
    assert missing.returncode == 1 and "not in" in missing.stdout
    assert stratune(*TRAIN, "--out", str(out)).returncode == 0
    # the same run, recorded again; the seal covers the new usage.json (this sitting paid)
    assert _unsealed((out / "manifest.json").read_text()) == _unsealed(manifest)
    assert stratune("replay", str(out)).returncode == 0


def _unsealed(text: str) -> dict:
    data = json.loads(text)
    data.pop("seal")
    return data


def test_the_lock_names_the_command_that_holds_it(tmp_path):
    held = RunLock.acquire(tmp_path, "grid")
    try:
        with pytest.raises(RunLocked, match=r"another `stratune grid` \(pid \d+\) is writing "
                                             "this grid"):
            RunLock.acquire(tmp_path)
    finally:
        held.release()


def _grid_file(path: Path) -> Path:
    path.write_text("seeds = [3]\n[tasks.t]\ntask = 'toy'\n[pairs.p]\ntarget = "
                    "'scripted:toy-target'\noptimizer = 'scripted:toy-optimizer'\n"
                    "[ablations]\nfull = {}\n", encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("first", ["train", "grid"])
def test_train_and_grid_on_one_directory_never_both_run(tmp_path, capsys, first):
    """Whichever starts first holds the directory; the other is refused at once with exit 2
    and one line, and the first then finishes as if alone."""
    from tests.support.cli import main

    out, hold = tmp_path / "out", tmp_path / "hold"
    hold.write_text("")
    grid = _grid_file(tmp_path / "grid.toml")
    argv = {"train": [*TRAIN, "--out", str(out)], "grid": ["grid", str(grid), "--out", str(out)]}
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100",
           "STRATUNE_TEST_HOLD": str(hold), "STRATUNE_TEST_HOLD_AT": "2"}
    holder = subprocess.Popen([sys.executable, "-m", "tests.support.cli", *argv[first]],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        _wait_for(hold.with_name("hold.waiting"))
        second = "grid" if first == "train" else "train"
        assert main(argv[second]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and ("holds a training run" in err if first == "train"
                                         else "grid directory" in err), err
        hold.unlink()
        _, err = holder.communicate(timeout=120)
        assert holder.returncode == 0, err
    finally:
        hold.unlink(missing_ok=True)
        if holder.poll() is None:
            holder.kill()
    manifests = sorted(str(p.relative_to(out)) for p in out.rglob("manifest.json")
                       if "cache" not in p.parts)
    assert manifests == (["manifest.json"] if first == "train" else ["t/p/full/seed3/manifest.json"])


def test_a_directory_held_by_one_command_refuses_the_other(tmp_path, capsys):
    """The lock itself, whatever else the directory holds yet: a grid is refused a directory a
    train holds, and a train one a grid holds."""
    from tests.support.cli import main

    out = tmp_path / "out"
    out.mkdir()
    grid = _grid_file(tmp_path / "grid.toml")
    for holder, argv in (("train", ["grid", str(grid), "--out", str(out)]),
                         ("grid", [*TRAIN, "--out", str(out)])):
        held = RunLock.acquire(out, holder)
        try:
            assert main(argv) == 2
        finally:
            held.release()
        assert f"another `stratune {holder}`" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == [".lock"]


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "fifo", "directory"])
def test_a_lock_file_that_is_not_its_own_regular_file_is_refused_untouched(tmp_path, kind):
    """Taking the lock truncates `.lock`; through a link it would truncate another file."""
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me\n")
    run = tmp_path / "run"
    run.mkdir()
    lock = run / ".lock"
    if kind == "symlink":
        lock.symlink_to(victim)
    elif kind == "hardlink":
        os.link(victim, lock)
    elif kind == "fifo":
        os.mkfifo(lock)
    else:
        lock.mkdir()
    with pytest.raises(StraTuneError) as caught:
        RunLock.acquire(run)
    message = str(caught.value)
    assert str(lock) in message and "remove it" in message and "\n" not in message
    assert victim.read_text() == "keep me\n"


def test_train_refuses_a_symlinked_lock_with_exit_2(tmp_path):
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me\n")
    run = tmp_path / "run"
    run.mkdir()
    (run / ".lock").symlink_to(victim)
    result = stratune(*TRAIN, "--out", str(run))
    assert result.returncode == 2, result.stderr
    assert "symbolic link" in result.stderr and result.stderr.count("\n") == 1
    assert victim.read_text() == "keep me\n"
    assert not (run / "manifest.json").exists()
