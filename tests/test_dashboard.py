"""The dashboard without a browser: its data holds the trace's numbers (compared with
events.jsonl read as plain JSON), its page carries no remote reference and no text as markup,
`view --html` and `serve` refuse bad input in one line, and the live source reports only what
changed. The page in a real browser: tests/test_dashboard_browser.py (`make test-browser`)."""

from __future__ import annotations

import io
import json
import re
import shutil
import signal
import socket
import subprocess
import sys

import pytest
from rich.console import Console

from replay.commands.app import main as stratune
from replay.dashboard.diffs import side_by_side, skill_diff
from replay.dashboard.live_source import LiveSource
from replay.dashboard.page import document, script_json
from replay.dashboard.run_data import run_sections
from replay.dashboard.screenshots import trace_grid
from replay.dashboard.source import build_page
from tests.support.cli import ROOT, TOY_RUN, toy_extensions
from tests.support.dashboard import SCRIPT, hostile_run, raw_events

RUN_TRACES = [p for p in (ROOT / "traces").iterdir() if (p / "manifest.json").is_file()]
DEMO = ROOT / "traces" / "demo"


@pytest.fixture(scope="module")
def demo() -> dict:
    return run_sections(DEMO)


def test_the_trajectory_is_the_current_skills_batch_score_per_round(demo):
    """One point per round that ran its current skill on its batch: spent at its start, the
    batch's mean score, and a mark where the round accepted a candidate."""
    events = raw_events(DEMO)
    starts = {e["round"]: e for e in events if e["_type"] == "RoundStarted"}
    replaced = {e["round"] for e in events if e["_type"] == "SkillReplaced"}
    expected = [(e["round"] + 1, starts[e["round"]]["spent"], e["mean_score"],
                 e["round"] in replaced)
                for e in events if e["_type"] == "BatchExecuted"
                and e["skill_id"] == starts[e["round"]]["current_id"]]
    got = [(p["round"], p["spent"], p["score"], p["accepted"]) for p in demo["trajectory"]["points"]]
    assert got == expected and demo["trajectory"]["budget"] == 288
    assert sum(accepted for *_, accepted in got) == 2


def test_each_candidate_holds_its_stage_results_and_decision(demo):
    events = raw_events(DEMO)
    stages = {(e["candidate_id"], e["outcome"]["stage"]): e["outcome"] for e in events
              if e["_type"] == "StageResult"}
    decided = {e["candidate_id"]: e["verdict"] for e in events if e["_type"] == "CandidateDecided"}
    shown = [c for r in demo["rounds"] for c in r["candidates"]]
    assert {c["id"] for c in shown} == set(decided)
    for c in shown:
        assert c["verdict"] == decided[c["id"]]
        for stage in ("screening", "validation"):
            assert c[stage] == stages.get((c["id"], stage))
    accepted = next(c for c in shown if c["verdict"] == "accepted")
    assert accepted["diff"]["parts"][0]["ops"]  # the edit that made it


def test_the_failures_shown_are_the_batch_samples_the_skill_did_not_solve(demo):
    """Round 2 (I2+F1): the initial skill solved none of its batch of three; each failure has
    its input, the target's reply and the expected answer, read from the run's cache."""
    second = demo["rounds"][1]
    failures = second["feedback"]["failures"]
    assert [f["sample"] for f in failures] == second["feedback"]["batch"]["samples"]
    booking = failures[0]
    assert "Question: What is the check-in date?" in booking["input"]
    assert booking["expected"] == "Sep 04, 2023" and "Sep 04, 2023" in booking["reply"]
    assert demo["failures_note"] == ""


def test_final_selection_and_test_scores_are_the_runs(demo):
    evaluation = json.loads((DEMO / "evaluation.json").read_text())
    final = demo["final"]
    assert dict(final["test"]["scores"]) == evaluation["scores"]
    assert final["final"]["id"] == json.loads((DEMO / "manifest.json").read_text())["final_id"]
    assert demo["skill"]["text"] == (DEMO / "final_skill.txt").read_text()
    header = dict(demo["header"])
    assert header["test"] == "0.021 → 0.958" and header["budget"] == "207 / 288 executions"


def test_a_side_by_side_diff_pairs_lines_and_names_its_operations():
    diff = side_by_side("a\nb\nc", "a\nB\nc\nd")
    assert diff["ops"] == [["replace", 1, 2, 1, 2], ["insert", 3, 3, 3, 4]]
    assert diff["rows"] == [["equal", 1, "a", 1, "a"], ["replace", 2, "b", 2, "B"],
                            ["equal", 3, "c", 3, "c"], ["insert", None, "", 4, "d"]]
    assert skill_diff("x", "x")["parts"][0]["ops"] == []


def test_no_trace_text_can_close_the_data_block_or_run(tmp_path):
    page = build_page(hostile_run(tmp_path / "run"))
    html = document(page.kind, page.title, page.sections)
    data = html[html.index('id="stratune-data">'):html.index("</script>")]
    assert "<" not in data.removeprefix('id="stratune-data">') and "__pwned" in data
    assert json.loads(script_json({"t": SCRIPT}).encode().decode("unicode_escape"))["t"] == SCRIPT


def test_the_page_refers_to_nothing_outside_itself():
    """No src, href or import outside the page; the policy lets it fetch nothing when opened
    from a file."""
    page = build_page(DEMO)
    html = document(page.kind, page.title, page.sections)
    ours = re.sub(r"<script>\n.*?\n</script>", "", html, count=1, flags=re.S)  # plotly.js
    assert not re.search(r"""(src|href)\s*=\s*["']?\w+://""", ours)
    assert not re.search(r"""\bimport\s*\(|@import|url\(""", ours)
    assert "connect-src 'none'" in html and "default-src 'none'" in html


def test_the_grid_lists_every_cell_and_compares_them(tmp_path):
    grid = trace_grid(tmp_path / "grid")
    page = build_page(grid)
    cells = page.sections["cells"]
    assert len(cells) == len(RUN_TRACES) and {c["state"] for c in cells} == {"done"}
    demo_cell = next(c for c in cells if c["id"] == "demo/qwen0.5b-qwen1.5b/full/seed0")
    assert demo_cell["score"] == pytest.approx(95.83, abs=0.01) and demo_cell["spent"] == 207
    methods = next(t for t in page.sections["tables"] if t["id"] == "methods")
    ranks = [cell["rank"] for row in methods["rows"] for cell in row["cells"]]
    assert 1 in ranks and 2 in ranks
    assert "run:demo/qwen0.5b-qwen1.5b/full/seed0" in page.sections


def _errors(argv: list[str], capsys) -> tuple[int, list[str]]:
    code = stratune(argv)
    return code, [line for line in capsys.readouterr().err.splitlines() if line]


@pytest.mark.parametrize(("target", "said"), [
    ("inside", "inside a run directory"), ("dir", "is a directory"),
    ("under-a-file", "is not a directory"),
])
def test_view_html_refuses_a_bad_target_in_one_line(tmp_path, capsys, target, said):
    run = tmp_path / "demo"
    shutil.copytree(DEMO, run)
    (tmp_path / "file").write_text("")
    output = {"inside": run / "page.html", "dir": tmp_path,
              "under-a-file": tmp_path / "file" / "page.html"}[target]
    code, lines = _errors(["view", str(run), "--html", str(output)], capsys)
    assert code == 2 and len(lines) == 1 and said in lines[0]
    assert not (run / "page.html").exists()


@pytest.mark.parametrize("command", ["view", "serve"])
def test_a_directory_that_is_neither_a_run_nor_a_grid_is_refused(tmp_path, capsys, command):
    (tmp_path / "notes.txt").write_text("hello")
    extra = ["--html", str(tmp_path.parent / "x.html")] if command == "view" else ["--port", "0"]
    code, lines = _errors([command, str(tmp_path), *extra], capsys)
    assert code == 2 and len(lines) == 1
    assert "neither manifest.json nor grid.toml" in lines[0]


def test_serve_on_a_port_in_use_names_the_port(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, lines = _errors(["serve", str(DEMO), "--port", str(port)], capsys)
    assert code == 2 and len(lines) == 1 and f"--port {port}: already in use" in lines[0]


def test_the_live_source_waits_reports_damage_and_sends_only_what_changed(tmp_path):
    said: list[str] = []
    run = tmp_path / "run"
    source = LiveSource(run, said.append)
    source.refresh()
    assert "no run or grid there yet" in said[-1]
    shutil.copytree(DEMO, run)
    lines = (run / "events.jsonl").read_bytes().splitlines(keepends=True)
    (run / "events.jsonl").write_bytes(b"".join(lines[:20]) + lines[20][:15])  # a torn line
    (run / "manifest.json").write_text((DEMO / "manifest.json").read_text()
                                       .replace('"finished": true', '"finished": false'))
    source.refresh()
    assert said[-1].startswith("run not finished")
    first = source.generation
    assert source.snapshot(first)["sections"] == {}
    (run / "events.jsonl").write_bytes(b"".join(lines[:40]))
    source.refresh()
    changed = source.snapshot(first)["sections"]
    assert "rounds" in changed and "costs" not in changed  # usage.json did not change
    (run / "events.jsonl").write_bytes(b"".join(lines[:40]) + b"{not json\n")
    source.refresh()
    assert said[-1].startswith("error: ") and "events.jsonl:41" in said[-1]
    assert source.snapshot(None)["sections"]["rounds"]  # the rounds read before stay
    assert not list(run.glob("*.tmp")) and not (run / ".lock").exists()  # nothing written


def test_train_prints_the_serve_command(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    out = tmp_path / "toy run"
    assert stratune(["train", *TOY_RUN, "--limit", "12", "--out", str(out)],
                    extensions=toy_extensions()) == 0
    assert f"live page: stratune serve '{out}'" in capsys.readouterr().out


def test_ctrl_c_ends_serve_cleanly(tmp_path):
    serve = subprocess.Popen([sys.executable, "-m", "replay.cli", "serve", str(DEMO), "--port",
                              "0"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        first = serve.stdout.readline()
        assert re.match(r"serving .*demo at http://127\.0\.0\.1:\d+/ \(read-only", first)
        serve.send_signal(signal.SIGINT)
        out, err = serve.communicate(timeout=60)
    finally:
        if serve.poll() is None:
            serve.kill()
    assert (serve.returncode, err) == (0, "") and "serve: stopped" in out


def test_the_view_html_command_writes_the_page(tmp_path, capsys):
    assert stratune(["view", str(DEMO), "--html", str(tmp_path / "run.html")]) == 0
    assert "written:" in capsys.readouterr().out
    assert (tmp_path / "run.html").read_text().startswith("<!doctype html>")
    Console(file=io.StringIO())  # the rich viewer is untouched: `view` still prints it
    assert stratune(["view", str(DEMO), "--width", "100"]) == 0
    assert "rounds" in capsys.readouterr().out


def test_a_live_grid_sends_only_the_cells_that_changed(tmp_path):
    grid = trace_grid(tmp_path / "grid")
    source = LiveSource(grid, lambda line: None)
    source.refresh()
    assert source.kind == "grid" and len(source.snapshot(None)["sections"]["cells"]) == len(RUN_TRACES)
    first = source.generation
    cell = grid / "demo/qwen0.5b-qwen1.5b/full/seed0"
    lines = (cell / "events.jsonl").read_bytes().splitlines(keepends=True)
    (cell / "events.jsonl").write_bytes(b"".join(lines[:-1]))  # as if RunFinished were unwritten
    source.refresh()
    changed = source.snapshot(first)["sections"]
    assert "run:demo/qwen0.5b-qwen1.5b/full/seed0" in changed and "cells" in changed
    assert [k for k in changed if k.startswith("run:")] == [
        "run:demo/qwen0.5b-qwen1.5b/full/seed0"]
