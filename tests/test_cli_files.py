"""The `stratune` command and the files it is pointed at: a read-only file system, cache
directories that are read-only, misplaced or missing, and a config value out of range."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.support.cli import main
from tests.support.disks import remount
from tests.support.refusals import TRAIN, read_only, refused, run, write

__all__ = ["run"]


def test_out_on_a_read_only_file_system(tmp_path, capsys):
    with read_only(tmp_path / "ro") as ro:
        refused(capsys, [*TRAIN, "--out", str(ro / "run")], "--out", str(ro))
        refused(capsys, [*TRAIN, "--out", str(ro)], "--out", str(ro))


def test_cache_stats_on_a_read_only_cache(run, tmp_path, capsys):
    """Not an error at all: stats open the cache read-only and create no file."""
    with read_only(tmp_path / "ro") as ro:
        if os.geteuid() == 0:  # fill the read-only tmpfs: remount it writable for a moment
            remount(ro, "rw")
            shutil.copytree(run / "cache", ro / "cache")
            remount(ro, "ro")
        else:
            ro.chmod(0o755)
            shutil.copytree(run / "cache", ro / "cache")
            (ro / "cache").chmod(0o555)
            ro.chmod(0o555)
        before = sorted(p.name for p in (ro / "cache").iterdir())
        assert main(["cache", "stats", "--cache-dir", str(ro / "cache")]) == 0
        assert "entries" in capsys.readouterr().out
        assert sorted(p.name for p in (ro / "cache").iterdir()) == before
        if os.geteuid() != 0:
            (ro / "cache").chmod(0o755)


def test_the_documented_cache_dir_placement_works(run, capsys):
    for argv in (["cache", "stats", "--cache-dir", str(run / "cache")],
                 ["cache", "--cache-dir", str(run / "cache"), "stats"]):
        assert main(argv) == 0
        assert f"cache {run / 'cache'}:" in capsys.readouterr().out


def test_a_missing_cache_is_never_created(tmp_path, capsys):
    for command in (["stats"], ["explain", "0" * 32], ["prune", "--corrupt"]):
        refused(capsys, ["cache", "--cache-dir", str(tmp_path / "typo"), *command], "typo")
    assert not (tmp_path / "typo").exists()


def test_out_of_range_config_is_refused(tmp_path, capsys):
    config = write(tmp_path / "c.json", '{"delta": 1.5}')
    refused(capsys, [*TRAIN, "--config", str(config), "--out", str(tmp_path / "o")], "delta")
    assert not (tmp_path / "o").exists()


def test_special_files_where_a_file_is_expected(tmp_path, capsys):
    """A FIFO (whose read would block forever) and a symlink loop, given as the config, the
    grid file or the task: one line, exit 2, never a hang or a traceback."""
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "loop.jsonl").symlink_to(tmp_path / "loop.jsonl")
    os.mkfifo(tmp_path / "fifo.jsonl")
    out = str(tmp_path / "o")
    refused(capsys, [*TRAIN, "--config", str(tmp_path / "fifo"), "--out", out], "fifo",
            "not a regular file")
    refused(capsys, [*TRAIN, "--config", str(tmp_path / "loop"), "--out", out], "loop")
    refused(capsys, ["grid", str(tmp_path / "fifo"), "--out", out], "fifo", "regular file")
    refused(capsys, ["grid", str(tmp_path / "loop"), "--out", out], "loop")
    refused(capsys, ["plan", "--task", str(tmp_path / "fifo.jsonl"), *TRAIN[3:]], "fifo.jsonl",
            "not a regular file")
    refused(capsys, ["plan", "--task", str(tmp_path / "loop.jsonl"), *TRAIN[3:]], "loop.jsonl")
    evaluate = ["evaluate", *TRAIN[1:5], "--limit", "10"]
    refused(capsys, [*evaluate, "--skill", str(tmp_path / "fifo")], "--skill", "fifo",
            "not a regular file")
    (tmp_path / "s.txt").write_text("Answer.\n")
    refused(capsys, [*evaluate, "--skill", str(tmp_path / "s.txt"), "--baseline",
                     str(tmp_path / "fifo")], "--baseline", "not a regular file")
    assert not (tmp_path / "o").exists()


def test_an_empty_anthropic_api_key_is_one_line_before_anything_is_written(
        tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    refused(capsys, [*TRAIN[:3], "--target", "anthropic:claude-haiku-4-5", *TRAIN[5:], "--out",
                     str(tmp_path / "o")], "ANTHROPIC_API_KEY is empty")
    assert not (tmp_path / "o").exists()


def _scorer(tmp_path, body: str) -> str:
    """A scorer that runs `body` on the toy target's replies (mid-run), and scores any other
    answer (the checks when the task loads)."""
    name = f"scorer_{tmp_path.name.replace('-', '_')}"
    write(tmp_path / f"{name}.py", "import sys, time\n\ndef score(answer, expected):\n"
          f"    if 'understand' in answer:\n        {body}\n"
          "    return float(answer == expected)\n")
    return f"{name}:score"


def _task(tmp_path) -> str:
    import json

    rows = [{"id": f"q{i}", "input": f"Say {i}", "expected": str(i),
             "split": "train" if i < 8 else "test"} for i in range(10)]
    path = tmp_path / "task.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_a_scorer_calling_sys_exit_stops_the_run_in_one_line_resumable(tmp_path, capsys):
    from tests.support.refusals import cwd

    argv = ["train", "--task", _task(tmp_path), "--scorer", "", *TRAIN[3:], "--budget", "40",
            "--out", str(tmp_path / "o")]
    with cwd(tmp_path):
        argv[4] = _scorer(tmp_path, "sys.exit(3)")
        said = refused(capsys, argv, "sys.exit(3)", "sample", "resume", hinted=True)
    assert "Traceback" not in said
    assert (tmp_path / "o" / "cache").is_dir()  # its paid calls are kept for the rerun


@pytest.mark.parametrize("sigint", ["as given", "ignored"])
def test_timeout_ends_a_run_whose_scorer_blocks(tmp_path, capsys, monkeypatch, sigint):
    """The soft --timeout is checked at rounds and calls; a scorer that never returns is
    interrupted by the watchdog, in one line, and the run stays resumable; also in a job
    started in the background, which inherits SIGINT ignored."""
    import signal

    from replay.stops import hard_timeout
    from tests.support.refusals import cwd

    monkeypatch.setattr(hard_timeout, "GRACE_SECONDS", 0.0)
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.SIG_IGN if sigint == "ignored"
                  else signal.default_int_handler)
    argv = ["train", "--task", _task(tmp_path), "--scorer", "", *TRAIN[3:], "--budget", "40",
            "--timeout", "2s", "--out", str(tmp_path / "o")]
    with cwd(tmp_path):
        argv[4] = _scorer(tmp_path, "time.sleep(600)")
        try:
            code = main(argv)
        finally:
            after = signal.getsignal(signal.SIGINT)
            signal.signal(signal.SIGINT, previous)
    assert after is (signal.SIG_IGN if sigint == "ignored" else signal.default_int_handler)
    err = capsys.readouterr().err
    assert code == 3, err
    assert err.startswith("error: --timeout 2s reached") and err.count("\n") == 1, err
    assert (tmp_path / "o" / "cache").is_dir()  # its paid calls are kept for the rerun


def test_a_terminal_that_is_not_utf8_gets_one_line_and_never_a_traceback(tmp_path):
    """LC_ALL=C with PYTHONIOENCODING=ascii: --help (which holds a '§') is written with that
    character escaped, and bad input naming a non-ASCII path is one line with exit 2."""
    from tests.support.cli import stratune

    ascii_env = {"LC_ALL": "C", "LANG": "C", "PYTHONIOENCODING": "ascii"}
    helped = stratune("train", "--help", cwd=tmp_path, **ascii_env)
    assert helped.returncode == 0 and "Traceback" not in helped.stderr, helped.stderr
    assert "\\xa7" in helped.stdout  # the paper's section sign, escaped

    missing = str(tmp_path / "t\u00e2che.jsonl")
    refused_ = stratune("train", "--task", missing, *TRAIN[3:], "--out", str(tmp_path / "o"),
                        cwd=tmp_path, **ascii_env)
    assert refused_.returncode == 2, refused_.stderr
    assert refused_.stderr.startswith("error: ") and refused_.stderr.count("\n") == 1, \
        refused_.stderr
    assert "t\\xe2che.jsonl" in refused_.stderr and not (tmp_path / "o").exists()
