"""Hostile outputs against every sandbox tier: an output path that is not a file, and a
work directory too deep for recursion or path names. Either costs that case its score, with
the reason in the score's summary, never the whole run; the run directory always goes.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from llm_cache.records import Response
from replay.tasks import spreadsheet
from replay.tasks.sandbox import TierName, run, run_python
from replay.tasks.sandbox.cleanup import remove_tree
from tests.sandbox_fixtures import FAST, GOOD, TIER_PARAMS, tier_or_skip, write_layout

DEEP = '''
import os
name = "d" * 200  # 1,500 levels of these are far past PATH_MAX
for level in range(1500):
    os.mkdir(name)
    os.chdir(name)
    if level % 100 == 0:
        open("f", "w").close()
for level in range(0, 1500, 100):
    os.chdir("..")
try:
    os.chmod(".", 0)  # refused by the Landlock tier's filter; a 000 directory otherwise
except OSError:
    pass
'''


@pytest.fixture
def run_dirs(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every run directory the sandbox makes during the test."""
    made: list[Path] = []
    real = tempfile.mkdtemp

    def recording(*args: object, **kw: object) -> str:
        path = real(*args, **kw)  # type: ignore[call-overload]
        made.append(Path(path))
        return path

    monkeypatch.setattr(run.tempfile, "mkdtemp", recording)
    return made


@pytest.mark.parametrize("tier_name", TIER_PARAMS)
def test_directory_at_output_path_costs_only_the_case(tmp_path: Path, tier_name: TierName,
                                                      run_dirs: list[Path]) -> None:
    """`os.mkdir(OUTPUT_PATH)` scores 0 and says why; the next program scores as before."""
    tier_or_skip(tier_name)
    task = spreadsheet.load(write_layout(tmp_path / "data"), limits=FAST, sandbox=tier_name)
    sample = task.split("train")[0]
    hostile = task.score(sample, (Response(text="```python\nimport os\nos.mkdir(OUTPUT_PATH)\n```"),))
    assert hostile.value == 0.0 and "output path is not a regular file" in hostile.summary
    assert task.score(sample, (Response(text=GOOD),)).value == 1.0
    assert run_dirs and not any(d.exists() for d in run_dirs)


@pytest.mark.parametrize("tier_name", TIER_PARAMS)
def test_deep_tree_is_removed_and_the_output_still_counts(tmp_path: Path, tier_name: TierName,
                                                          run_dirs: list[Path]) -> None:
    """A 1,500-level tree of 200-character names (one level emptied of rights) beside a right
    answer: the case scores 1 and the run directory is gone afterwards."""
    tier_or_skip(tier_name)
    task = spreadsheet.load(write_layout(tmp_path / "data"), limits=FAST, sandbox=tier_name)
    sample = task.split("train")[0]
    code = GOOD.replace("wb.save(OUTPUT_PATH)", "wb.save(OUTPUT_PATH)\n" + DEEP)
    assert task.score(sample, (Response(text=code),)).value == 1.0
    assert run_dirs and not any(d.exists() for d in run_dirs)


@pytest.mark.parametrize("tier_name", TIER_PARAMS)
def test_special_files_at_output_path_are_not_read(tier_name: TierName) -> None:
    """A fifo (where the tier allows one) or a symlink to /dev/zero at OUTPUT_PATH gives no
    output and a reason."""
    for make in ("os.mkfifo(OUTPUT_PATH)", "os.symlink('/dev/zero', OUTPUT_PATH)"):
        code = f"import os\ntry:\n    {make}\nexcept PermissionError:\n    print('REFUSED')"
        result = run_python(code, limits=FAST, tier=tier_or_skip(tier_name), output_name="out.bin")
        assert result.ok and result.output("out.bin") is None, result
        refused = result.stdout.strip() == "REFUSED"
        assert refused or result.output_problem in ("output path is not a regular file",
                                                    "output file unreadable (Too many levels of "
                                                    "symbolic links)"), result.output_problem


def test_remove_tree_handles_depth_modes_and_symlinks(tmp_path: Path) -> None:
    """Removal is iterative and relative: 3,000 levels, a 000 directory, and a symlink to a
    file outside (which stays, as does its mode)."""
    outside = tmp_path / "keep.txt"
    outside.write_text("keep")
    outside.chmod(0o600)
    base = tmp_path / "run"
    base.mkdir()
    (base / "link").symlink_to(outside)
    here = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(3000):
        os.mkdir("x" * 100, dir_fd=here)
        below = os.open("x" * 100, os.O_RDONLY | os.O_DIRECTORY, dir_fd=here)
        os.close(here)
        here = below
    os.close(here)
    (base / ("x" * 100)).chmod(0)
    remove_tree(base)
    assert not base.exists()
    assert outside.read_text() == "keep" and outside.stat().st_mode & 0o777 == 0o600
