"""Shared by the tests of the `stratune` command's refusals: the one-line exit-2 check, task,
scorer and file writers, a read-only directory, and one recorded toy run."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import TOY_RUN, main, record_in_process
from tests.support.disks import tmpfs

TRAIN = ["train", *TOY_RUN]
ROW = {"id": "q1", "input": "What is 1 + 1?", "expected": "2", "split": "train"}
TEST_ROW = {**ROW, "id": "q2", "split": "test"}


def refused(capsys, argv: list[str], *names: str, hinted: bool = False) -> str:
    code = main(argv)
    captured = capsys.readouterr()
    said = captured.out + captured.err
    assert code == 2, f"{argv}: exit {code}: {said}"
    assert captured.err.startswith("error: ") and captured.err.count("\n") == 1, said
    assert "Traceback" not in said, said
    # the serve hint only for accepted input; `hinted`: refused by the run's own storage, later
    assert ("live page" in captured.out) == hinted, said
    for name in names:
        assert name in captured.err, f"{name!r} not named in: {captured.err}"
    return captured.err


def task_file(tmp: Path, lines: list[bytes], name: str = "task.jsonl") -> str:
    path = tmp / name
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return str(path)


def json_line(row: dict) -> bytes:
    return json.dumps(row).encode()


def scorer_module(tmp: Path, body: str) -> str:
    name = f"scorer_{tmp.name.replace('-', '_')}"  # a module of its own for each test
    (tmp / f"{name}.py").write_text(f"def score(answer, expected):\n    {body}\n")
    return f"{name}:score"


@contextlib.contextmanager
def cwd(path: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[Path]:
    """A directory on a read-only file system (a tmpfs mounted read-only, as root), or one
    the (non-root) user may not write."""
    if os.geteuid() == 0:
        with tmpfs(path, "ro,size=1m"):
            yield path
        return
    path.mkdir()
    path.chmod(0o555)
    try:
        yield path
    finally:
        path.chmod(0o755)



def write(path: Path, content: str | bytes) -> Path:
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    """One recorded toy run, for the cases that read or damage a run directory."""
    return record_in_process(tmp_path_factory.mktemp("errors") / "run")
