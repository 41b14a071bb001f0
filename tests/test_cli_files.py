"""The `stratune` command and the files it is pointed at: a read-only file system, cache
directories that are read-only, misplaced or missing, and a config value out of range."""

from __future__ import annotations

import os
import shutil

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
