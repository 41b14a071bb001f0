"""`stratune --help` builds every command's flags and imports no command: none of the backends,
the core's state and events, the trace files, the viewer or a command's body
(benchmarks/cli_startup.py times it; here only what is imported is checked)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.cli import ROOT

# imported by a command when it runs, never by the parser
COMMAND_ONLY = ("replay.models.specs", "replay.rundir.serde", "replay.rundir.trace", "replay.run.hooks",
                "replay.evaluate.command", "replay.run.runner", "replay.viewer", "replay.compare.render",
                "replay.compare.tables", "replay.grid.run", "llm_cache.backends", "llm_cache.store",
                "stratune_core.state.state", "stratune_core.state.events", "numpy",
                "replay.dashboard", "plotly", "http.server")

_PROBE = """
import contextlib, io, json, sys
from replay.commands.app import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(ARGV)
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _imported(argv: list[str]) -> tuple[int, set[str]]:
    done = subprocess.run([sys.executable, "-c", _PROBE.replace("ARGV", json.dumps(argv))],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return out["code"], set(out["modules"])


@pytest.mark.parametrize("argv", [["--help"], ["train", "--help"], ["compare", "--help"],
                                  ["serve", "--help"], ["view", "--help"],
                                  ["evaluate", "--help"], ["cache", "--help"]])
def test_help_imports_no_command(argv):
    code, modules = _imported(argv)
    assert code == 0
    assert [m for m in COMMAND_ONLY if m in modules] == []


def test_the_probe_sees_a_command_that_runs():
    """The same probe, on a command that runs (`view` of a trace), does see its imports."""
    code, modules = _imported(["view", "traces/demo", "--width", "100"])
    assert code == 0
    assert {"replay.rundir.trace", "stratune_core.state.events"} <= modules
