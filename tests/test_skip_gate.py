"""The skip gate in conftest.py: a skip whose reason is not on tests/allowed_skips.toml fails."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = ROOT / "tests" / "allowed_skips.toml"

GATE = f"""
import importlib.util
_spec = importlib.util.spec_from_file_location("stratune_gate", {str(ROOT / "conftest.py")!r})
_gate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_gate)
pytest_configure = _gate.pytest_configure
"""


def test_an_unlisted_skip_fails_and_a_listed_one_passes(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(GATE)
    pytester.makepyfile(
        test_a="""
import pytest

def test_missing_tool():
    pytest.skip("frobnicator is not installed")

def test_listed():
    pytest.skip("needs root to drop to another uid")

@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False
""",
        test_b="""
import pytest
pytest.importorskip("no_such_module_anywhere")
""")
    result = pytester.runpytest("-q", "test_a.py")
    result.assert_outcomes(failed=1, skipped=1, xfailed=1)
    result.stdout.fnmatch_lines(["*frobnicator is not installed*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    module_skip = pytester.runpytest("-q", "test_b.py")
    module_skip.assert_outcomes(errors=1)
    module_skip.stdout.fnmatch_lines(["*allowed_skips.toml*no_such_module_anywhere*"])


def test_every_allowed_skip_says_why_and_the_list_stays_short() -> None:
    with ALLOWED.open("rb") as f:
        entries = tomllib.load(f)["allow"]
    assert 0 < len(entries) <= 8
    for entry in entries:
        assert set(entry) == {"reason", "why"}, entry
        assert len(entry["why"].split()) >= 8, entry
