"""Hostile programs against every sandbox tier, kernel-facing: /proc/sys and the uid map,
file metadata outside the run, SysV IPC, the disk, ptrace and namespaces, the answer's file
metadata; and honest programs that start subprocesses from a threaded caller. Run as root by
`make test` and as a dropped uid by `test_sandbox_as_user.py` (programs in sandbox_probes).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from llm_cache.records import Response
from replay.tasks import spreadsheet
from replay.tasks.sandbox import TierName, run, run_python, workspace
from tests import sandbox_disk_probes as disk_probes
from tests import sandbox_probes as probes
from tests.sandbox_fixtures import FAST, GOOD, TIER_PARAMS, tier_or_skip, write_layout

pytestmark = pytest.mark.parametrize("tier_name", TIER_PARAMS)


def test_proc_sys_and_host_identity(tier_name: TierName) -> None:
    """Kernel settings cannot be opened for writing, the program's processes are never host
    uid 0 (read from the host's /proc), kallsyms is empty or unreadable, and, started by
    root, no run-directory path shows in its mountinfo."""
    outcome = probes.probe_proc_sys(tier_or_skip(tier_name), FAST)
    assert outcome.verdict == "blocked", outcome
    if os.geteuid() == 0:
        assert "LEAK" not in outcome.result.stdout, outcome


def test_file_metadata_outside_the_run_is_unchanged(tmp_path: Path, tier_name: TierName) -> None:
    """chmod/chown/utime/xattr calls on the caller's own files (and on the answer workbook)
    change nothing."""
    tier = tier_or_skip(tier_name)
    own = tmp_path / "own.txt"
    own.write_text("mine")
    root = write_layout(tmp_path / "data")
    gold = next(root.glob("SpreadsheetBench/train/spreadsheet/t1/1_*_answer.xlsx"))
    outcome = probes.probe_metadata(tier, FAST, [own, gold])
    assert outcome.verdict == "blocked", outcome


def test_sysv_ipc_is_not_shared_with_the_host(tier_name: TierName) -> None:
    """The caller's 0600 segment is neither found nor attached, and no segment, queue or
    semaphore set the program made outlives the run."""
    outcome = probes.probe_sysv_ipc(tier_or_skip(tier_name), FAST)
    assert outcome.verdict in ("blocked", "contained"), outcome


def test_disk_reservation_and_fast_writes_are_bounded(tier_name: TierName,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """fallocate of 2 GiB and 320 MiB written at full speed: refused, or stopped and counted
    against the run, and the run directory is removed."""
    made: list[Path] = []
    real = tempfile.mkdtemp
    monkeypatch.setattr(run.tempfile, "mkdtemp",
                        lambda *a, **kw: made.append(Path(real(*a, **kw))) or str(made[-1]))
    outcome = probes.probe_disk(tier_or_skip(tier_name), FAST, lambda: made)
    assert outcome.verdict in ("blocked", "contained"), outcome
    assert "RESERVED" not in outcome.result.stdout or not outcome.result.ok


def test_ptrace_and_new_user_namespaces_are_refused(tier_name: TierName) -> None:
    """PTRACE_ATTACH on the namespace's first process and on the parent fails at once (no
    stall to the wall limit); clone and unshare of a user namespace fail."""
    outcome = probes.probe_ptrace_and_namespaces(tier_or_skip(tier_name), FAST)
    assert outcome.verdict == "blocked", outcome


def test_answer_workbook_handles_are_refused(tmp_path: Path, tier_name: TierName) -> None:
    """O_PATH and name_to_handle_at on the answer's path fail; under bubblewrap so does stat
    (Landlock cannot hide a path's size and times: see the README's table)."""
    root = write_layout(tmp_path / "data")
    gold = next(root.glob("SpreadsheetBench/train/spreadsheet/t1/1_*_answer.xlsx"))
    outcome = probes.probe_gold_metadata(tier_or_skip(tier_name), FAST, gold)
    assert outcome.verdict == "blocked", outcome
    if tier_name is TierName.BUBBLEWRAP:
        assert "STAT" not in outcome.result.stdout, outcome


SUBPROCESS = '''
import subprocess, sys
done = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True,
                      check=True)
open(OUTPUT_PATH, "w").write(done.stdout)
'''


def test_honest_subprocess_runs_from_a_threaded_caller(tmp_path: Path, tier_name: TierName) -> None:
    """With 48 threads alive in the caller (a thread pool), programs that start a subprocess
    still run, four at a time, and an honest answer still scores 1."""
    tier = tier_or_skip(tier_name)
    stop = threading.Event()
    idle = [threading.Thread(target=stop.wait) for _ in range(48)]
    for thread in idle:
        thread.start()
    try:
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda _: run_python(SUBPROCESS, limits=FAST, tier=tier,
                                                         output_name="out.txt"), range(4)))
        task = spreadsheet.load(write_layout(tmp_path / "data"), limits=FAST, sandbox=tier_name)
        honest = GOOD.replace("wb.save(OUTPUT_PATH)",
                              "wb.save(OUTPUT_PATH)\n" + SUBPROCESS.replace("OUTPUT_PATH", "'x'"))
        score = task.score(task.split("train")[0], (Response(text=honest),))
    finally:
        stop.set()
        for thread in idle:
            thread.join()
    assert [r.output("out.txt") for r in results] == [b"42\n"] * 4, results
    assert score.value == 1.0, score


LATE_SUBPROCESS = "import time\ntime.sleep(1.5)\n" + SUBPROCESS


def test_threads_the_caller_starts_during_a_run_never_fail_its_subprocess(
    tier_name: TierName,
) -> None:
    """64 threads started by the caller after the run began (past any slack counted at its
    start) leave the program's process share intact: its subprocess still runs."""
    tier = tier_or_skip(tier_name)
    stop = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(run_python, LATE_SUBPROCESS, limits=FAST, tier=tier,
                              output_name="out.txt")
        time.sleep(0.5)
        late = [threading.Thread(target=stop.wait) for _ in range(64)]
        for thread in late:
            thread.start()
        try:
            result = pending.result()
        finally:
            stop.set()
            for thread in late:
                thread.join()
    assert result.output("out.txt") == b"42\n", result


def test_probe_files_are_left_as_they_were(tmp_path: Path, tier_name: TierName) -> None:
    """The metadata probe itself: files it only called on keep their mode (a broken sandbox
    would have made this copy setuid)."""
    copy = tmp_path / "tool"
    shutil.copyfile("/usr/bin/true", copy)
    os.chmod(copy, 0o755)
    outcome = probes.probe_metadata(tier_or_skip(tier_name), FAST, [copy])
    assert outcome.verdict == "blocked", outcome
    assert os.stat(copy).st_mode & 0o7777 == 0o755


COPIES = '''
import shutil
shutil.copy(INPUT_PATH, "copy.txt")  # sets the copy's mode
shutil.copy2(INPUT_PATH, "copy2.txt")  # and its times and extended attributes
shutil.copytree(".", "tree", ignore=shutil.ignore_patterns("tree", ".tmp"))
open(OUTPUT_PATH, "w").write(open("copy2.txt").read() + open("tree/copy.txt").read())
'''


def test_honest_copies_with_metadata_still_work(tier_name: TierName) -> None:
    """shutil.copy, copy2 and copytree, which set modes, times and attributes, succeed in
    every tier (the Landlock tier drops those changes instead of failing them)."""
    result = run_python(COPIES, limits=FAST, tier=tier_or_skip(tier_name),
                        inputs={"in.txt": b"abc"}, input_name="in.txt", output_name="out.txt")
    assert result.ok and result.output("out.txt") == b"abcabc", result


def test_where_mounts_are_refused_the_watch_bounds_the_work_directory(
    tier_name: TierName, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a tmpfs work directory (a user, or root where mounts are refused) the disk
    probe is still stopped or refused, and scores nothing."""
    monkeypatch.setattr(workspace, "_can_mount", [False])
    outcome = probes.probe_disk(tier_or_skip(tier_name), FAST, list)
    assert outcome.verdict in ("blocked", "contained"), outcome
    assert not outcome.result.ok or "BLOCKED write" in outcome.result.stdout, outcome


@pytest.mark.parametrize("mapped", [False, True], ids=["open", "mapped"])
def test_files_unlinked_while_open_still_count_against_the_work_directory(
    tier_name: TierName, mapped: bool
) -> None:
    """Twenty-two 3 MiB files, each unlinked while held open (or mapped after closing it),
    hold twice a 32 MiB work directory with no kernel bound on it: the watch stops the run
    and it scores nothing."""
    outcome = disk_probes.probe_unlinked(tier_or_skip(tier_name), FAST, mapped=mapped)
    assert outcome.verdict == "contained", outcome
    assert "work directory grew past 32 MiB" in outcome.result.limit, outcome
    assert outcome.result.output("out.txt") is None, outcome
