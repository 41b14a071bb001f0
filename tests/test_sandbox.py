"""The sandbox's ordinary behaviour and limits, per tier; tier detection and refusal."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from replay.tasks import spreadsheet
from replay.tasks.sandbox import (
    Limits,
    SandboxUnavailable,
    TierName,
    layout,
    run_python,
    tiers,
)
from stratune_core.records.errors import TaskDataError
from tests.sandbox_fixtures import FAST, TIER_PARAMS, tier_or_skip, write_layout


def _run(code: str, name: TierName, limits: Limits = FAST, **kw: object):  # noqa: ANN202
    return run_python(code, limits=limits, tier=tier_or_skip(name), **kw)


@pytest.mark.parametrize("name", TIER_PARAMS)
def test_runs_code_and_returns_output(name: TierName) -> None:
    """A well-behaved program exits 0 and its output file comes back."""
    result = _run("open(OUTPUT_PATH, 'w').write(open(INPUT_PATH).read().upper())", name,
                  inputs={"in.txt": b"abc"}, input_name="in.txt", output_name="out.txt")
    assert result.ok and result.output("out.txt") == b"ABC"


@pytest.mark.parametrize("name", TIER_PARAMS)
def test_environment_has_no_credentials(name: TierName, monkeypatch: pytest.MonkeyPatch) -> None:
    """Secrets in the parent's environment do not reach the program."""
    for key in ("ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "MY_KEY"):
        monkeypatch.setenv(key, "secret-value")
    result = _run("import os\nfor k, v in os.environ.items(): print(k, v)", name)
    assert result.ok
    names = [line.split(" ", 1)[0] for line in result.stdout.splitlines()]
    assert "HOME" in names and "secret-value" not in result.stdout
    assert not [n for n in names if n.endswith(("_KEY", "_TOKEN")) or n.startswith("AWS_")]


@pytest.mark.parametrize("name", TIER_PARAMS)
def test_wall_timeout_and_cpu_limit(name: TierName) -> None:
    """A sleeping program is killed at the wall time; a busy one at its CPU seconds."""
    slow = _run("import time\ntime.sleep(60)", name,
                limits=Limits(cpu_seconds=30, memory_bytes=1024**3, wall_seconds=1.5))
    assert slow.timed_out and not slow.ok and slow.exit_code is None
    busy = _run("while True:\n    pass", name,
                limits=Limits(cpu_seconds=1, memory_bytes=1024**3, wall_seconds=30))
    assert not busy.timed_out and busy.exit_code not in (0, None)


@pytest.mark.parametrize("name", TIER_PARAMS)
def test_file_size_and_memory_limits(name: TierName) -> None:
    """Writing past the file-size limit fails; one allocation past the memory limit raises
    MemoryError inside the program."""
    code = ("chunk = b'x' * 65536\nwith open(OUTPUT_PATH, 'wb') as f:\n"
            "    for _ in range(1000):\n        f.write(chunk)")
    big = _run(code, name, output_name="out.bin")
    assert not big.ok
    data = big.output("out.bin")
    assert data is None or len(data) <= FAST.file_bytes
    hungry = _run("x = bytearray(3 * 1024**3)", name)
    assert hungry.exit_code == 2 and "MemoryError" in hungry.stderr


@pytest.mark.parametrize("name", TIER_PARAMS)
def test_work_directory_growth_stops_the_run(name: TierName) -> None:
    """Filling the work directory past its limit stops the run and names the limit."""
    code = "for k in range(100000):\n    open(f'f{k}', 'w').close()"
    result = _run(code, name)
    assert not result.ok and "work directory" in result.limit


@pytest.mark.parametrize("name", TIER_PARAMS)
def test_symlinked_output_is_not_followed(tmp_path: Path, name: TierName) -> None:
    """An output planted as a symlink to another file is not read back."""
    target = tmp_path / "host.txt"
    target.write_text("host data")
    result = _run(f"import os\nos.symlink({str(target)!r}, OUTPUT_PATH)", name,
                  output_name="out.txt")
    assert result.ok and result.output("out.txt") is None


@pytest.mark.parametrize("name", TIER_PARAMS)
def test_each_run_starts_in_a_fresh_directory(name: TierName) -> None:
    """A file written by one run is not there in the next; run directories are removed."""
    first = _run("open('left.txt', 'w').write('x')", name)
    second = _run("import os\nprint(os.path.exists('left.txt'))", name)
    assert first.ok and second.ok and second.stdout.strip() == "False"


def test_no_tier_refuses_spreadsheetbench_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without bwrap and Landlock, loading SpreadsheetBench fails with one line naming what
    to install; the CLI turns it into exit 2."""
    monkeypatch.setattr(tiers.bubblewrap, "executable", lambda: None)
    monkeypatch.setattr(tiers.landlock_tier, "missing_parts", lambda: "Landlock ABI 0")
    tiers.detect.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable) as info:
            spreadsheet.load(write_layout(tmp_path))
    finally:
        tiers.detect.cache_clear()
    message = str(info.value)
    assert "\n" not in message and "apt-get install bubblewrap" in message
    assert "bwrap not found" in message and "Landlock ABI 0" in message


def test_cli_exit_code_for_a_missing_sandbox(tmp_path: Path) -> None:
    """`stratune plan --task spreadsheetbench` with no sandbox: one line, exit 2 (the
    machine's tiers are hidden: no bwrap on the lookup, no Landlock binding)."""
    code = ("import sys\nsys.modules['py_landlock'] = None\n"
            "from replay.tasks.sandbox import tiers\n"
            "tiers.bubblewrap.executable = lambda: None\n"
            "from replay.cli import main\n"
            f"sys.argv = ['stratune', 'plan', '--task', 'spreadsheetbench', '--target', 'anthropic:t', "
            "'--optimizer', 'anthropic:o', '--data', "
            f"{str(write_layout(tmp_path))!r}]\nraise SystemExit(main())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1], timeout=120)
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "install bubblewrap" in lines[0], done.stderr


def test_answer_inside_a_readable_directory_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Answers inside a directory the program may read (here: the data directory posing as
    the interpreter's) are refused at load time."""
    root = write_layout(tmp_path)
    monkeypatch.setattr(layout, "interpreter_roots", lambda: (tmp_path,))
    with pytest.raises(TaskDataError, match="answer workbook .* sandboxed program can read"):
        spreadsheet.load(root)
