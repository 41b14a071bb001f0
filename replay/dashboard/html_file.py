"""`stratune view DIR --html FILE`: the page of a run or a grid, written as one file."""

from __future__ import annotations

import os
from pathlib import Path

from replay.dashboard.page import document
from replay.dashboard.source import WAITING, NotADashboard, build_page, kind_of
from replay.rundir.output_path import check_output
from stratune_core.records.errors import StraTuneError


def check_target(output: str | Path, source: Path) -> Path:
    """Where the page may go: not inside a run, evaluation or grid directory (the run would
    read it as its own), not onto a directory, and into a directory that can be written."""
    path = check_output(output, "--html")
    resolved = path.resolve()
    if resolved == source.resolve() or source.resolve() in resolved.parents:
        raise StraTuneError(f"--html {path}: inside {source}, which only the command that made "
                            "it writes; write the page somewhere else")
    if path.is_dir():
        raise StraTuneError(f"--html {path}: is a directory; give a file name, e.g. "
                            f"{path / 'run.html'}")
    parent = resolved.parent
    if not parent.is_dir():
        what = "is not a directory" if parent.exists() else "does not exist"
        raise StraTuneError(f"--html {path}: {parent} {what}; give a file in an existing "
                            "directory")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise StraTuneError(f"--html {path}: cannot be written (permission denied); choose a "
                            "writable place")
    return path


def write_html(source: str | Path, output: str | Path) -> Path:
    root = Path(source)
    if kind_of(root) == WAITING:
        raise NotADashboard(f"{root}: not found, or holds no run yet; give a run directory "
                            "(train --out) or a grid directory (grid --out)")
    path = check_target(output, root)
    page = build_page(root)
    text = document(page.kind, page.title, page.sections)
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise StraTuneError(f"--html {path}: cannot be written ({exc.strerror}); choose a "
                            "writable place") from None
    return path
