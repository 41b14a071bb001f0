"""A skip whose reason is not in tests/allowed_skips.toml is reported as a failure.

A skipped test reads as a pass in a summary line; a dependency missing from a fresh machine would
otherwise go unnoticed for as long as nobody reads the skip reasons.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Generator
from pathlib import Path

import pytest

ALLOWED = Path(__file__).with_name("tests") / "allowed_skips.toml"


def allowed_patterns(path: Path = ALLOWED) -> list[re.Pattern[str]]:
    with path.open("rb") as f:
        entries = tomllib.load(f)["allow"]
    return [re.compile(entry["reason"]) for entry in entries]


class SkipGate:
    def __init__(self, patterns: list[re.Pattern[str]]) -> None:
        self.patterns = patterns

    def refuse(self, report: pytest.TestReport | pytest.CollectReport) -> None:
        if not report.skipped or hasattr(report, "wasxfail"):
            return
        longrepr = report.longrepr
        reason = (longrepr[2] if isinstance(longrepr, tuple) else str(longrepr))
        reason = reason.removeprefix("Skipped: ")
        if any(p.fullmatch(reason) for p in self.patterns):
            return
        report.outcome = "failed"
        report.longrepr = (f"skipped for a reason that is not in {ALLOWED.name}: {reason!r}; "
                           "install what is missing, or add the reason there with why it cannot "
                           "run on a 2-core Linux machine without a network")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self) -> Generator[None, pytest.TestReport, None]:
        outcome = yield
        self.refuse(outcome.get_result())

    @pytest.hookimpl(hookwrapper=True)
    def pytest_make_collect_report(self) -> Generator[None, pytest.CollectReport, None]:
        outcome = yield
        self.refuse(outcome.get_result())


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(SkipGate(allowed_patterns()), "stratune-skip-gate")
