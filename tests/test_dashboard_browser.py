"""The dashboard in a real Chromium, driven by Playwright: the run and grid pages render with
no console error and no request outside the file, their charts and tables hold the trace's
numbers (read back from the DOM, compared with events.jsonl), markup in a skill stays text,
the live page grows while a run trains against the fake Messages API server without losing the
reader's place, and `serve` on a missing, unfinished or damaged directory says so in one line.

`make test-browser` runs these (it installs Chromium from the system's packages when it is
missing); `make test` skips them, in one line."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.common import ToyResponder, body_to_request
from llm_cache.records import Role
from llm_cache.testing.fake_server import FakeAnthropicServer
from replay.commands.app import main as stratune
from replay.dashboard.html_file import write_html
from replay.dashboard.screenshots import CHROMIUM, browser, trace_grid
from replay.dashboard.server import DashboardServer, open_server, watch
from tests.support.cli import ROOT
from tests.support.dashboard import CANDIDATE, INITIAL, hostile_run, raw_events

pytestmark = pytest.mark.browser
if os.environ.get("STRATUNE_BROWSER_TESTS") != "1":  # one line for the whole file
    pytest.skip("browser tests: run `make test-browser` (Chromium and Playwright)",
                allow_module_level=True)

DEMO = ROOT / "traces" / "demo"
WORDS = ROOT / "examples" / "grid" / "words"
WAIT_MS = 120_000  # a deadline for slow machines, never a measurement


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    assert Path(CHROMIUM).is_file(), f"{CHROMIUM} is missing: `make test-browser` installs it"
    with browser() as b:
        yield b


class Watched:
    """A page with its console errors, uncaught exceptions and every request it made."""

    def __init__(self, chromium: Any, url: str) -> None:
        self.page = chromium.new_page(viewport={"width": 1280, "height": 900})
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(url)
        self.page.wait_for_selector("#status-line")

    def js(self, script: str) -> Any:
        return self.page.evaluate(script)


def _file_page(chromium: Any, page_file: Path, hash_: str = "") -> Watched:
    watched = Watched(chromium, page_file.as_uri() + hash_)
    assert watched.requests == [page_file.as_uri() + hash_] and watched.errors == []
    return watched


def test_the_run_page_holds_the_traces_numbers(chromium, tmp_path):
    page = _file_page(chromium, write_html(DEMO, tmp_path / "demo.html"))
    events = raw_events(DEMO)
    starts = {e["round"]: e for e in events if e["_type"] == "RoundStarted"}
    batches = [e for e in events if e["_type"] == "BatchExecuted"
               and e["skill_id"] == starts[e["round"]]["current_id"]]
    chart = page.js("() => { const d = document.getElementById('chart-trajectory').data[0];"
                    " return {x: d.x, y: d.y, symbol: d.marker.symbol}; }")
    assert chart["y"] == [e["mean_score"] for e in batches]
    assert chart["x"] == [starts[e["round"]]["spent"] for e in batches]
    replaced = {e["round"] for e in events if e["_type"] == "SkillReplaced"}
    assert [s == "triangle-up" for s in chart["symbol"]] == [e["round"] in replaced for e in batches]
    rows = page.js("() => [...document.querySelectorAll('#rounds-table tr[data-candidate]')]"
                   ".map((r) => [r.dataset.candidate, r.querySelector('.c-scr').textContent,"
                   " r.querySelector('.c-val').textContent, r.querySelector('.c-verdict').textContent])")
    gains = {(e["candidate_id"], e["outcome"]["stage"]): e["outcome"]["stats"]["gain"]
             for e in events if e["_type"] == "StageResult"}
    verdicts = {e["candidate_id"]: e["verdict"] for e in events if e["_type"] == "CandidateDecided"}
    assert {r[0] for r in rows} == set(verdicts)
    for cid, screening, validation, verdict in rows:
        assert screening == f"{gains[(cid, 'screening')]:+.3f}" and verdict == verdicts[cid]
        assert validation == (f"{gains[(cid, 'validation')]:+.3f}"
                              if (cid, "validation") in gains else "—")
    spent_end = {r: s["spent"] for r, s in starts.items()}
    for e in events:
        if e["_type"] == "ExecutionsCharged" and e["round"] in spent_end:
            spent_end[e["round"]] = e["spent"]
    shown = page.js("() => [...document.querySelectorAll('#rounds-table tr.round-first')].map("
                    "(r) => [+r.dataset.round, +(r.dataset.rounds || 1),"
                    " r.querySelector('.c-spent').textContent])")
    assert sum(n for _, n, _ in shown) == len(starts)  # every round, idle ones grouped
    for first, n, spent in shown:
        assert int(spent) == spent_end[first + n - 2]  # 1-based rows, 0-based events
    header = page.js("() => document.getElementById('sec-header').textContent")
    assert "207 / 288 executions" in header and "0.021 → 0.958" in header


def test_the_round_filter_shows_only_that_operator(chromium, tmp_path):
    page = _file_page(chromium, write_html(DEMO, tmp_path / "demo.html"))
    page.page.select_option("#round-filter", "I3")
    shown = page.js("() => [...document.querySelectorAll('#rounds-table tr.round-first')]"
                    ".map((r) => r.dataset.round)")
    assert shown == ["6"]
    page.page.select_option("#round-filter", "all")
    assert page.js("() => document.querySelectorAll('#rounds-table tr.round-first').length") > 5


def test_the_grid_page_lists_its_cells_and_opens_a_cells_run_page(chromium, tmp_path):
    grid = trace_grid(tmp_path / "grid")
    page = _file_page(chromium, write_html(grid, tmp_path / "grid.html"))
    cells = page.js("() => [...document.querySelectorAll('#cells-table tr[data-cell]')]"
                    ".map((r) => [r.dataset.cell, r.querySelector('.c-score').textContent])")
    assert len(cells) == len([p for p in (ROOT / "traces").iterdir()
                              if (p / "manifest.json").is_file()])
    assert dict(cells)["demo/qwen0.5b-qwen1.5b/full/seed0"] == "95.83"
    points = page.js("() => document.getElementById('chart-scores').data"
                     ".flatMap((t) => t.y).length")
    assert points == len(cells)  # one point per seed of every cell
    best = page.js("() => [...document.querySelectorAll('[data-table=methods] td[data-rank=\"1\"]')]"
                   ".map((c) => c.textContent)")
    assert best and all(text.endswith(" *") for text in best)
    page.page.click("a[href='#cell/demo/qwen0.5b-qwen1.5b/full/seed0']")
    page.page.wait_for_selector("#cell-view #chart-trajectory")
    assert "207 / 288 executions" in page.js("() => document.getElementById('cell-view').textContent")
    page.page.click("nav.crumbs a")  # back, then a baseline's page: its steps, no rounds
    page.page.click("a[href='#cell/demo/qwen0.5b-qwen1.5b/gepa/seed0']")
    page.page.wait_for_selector("#cell-view #sec-steps table")
    assert page.js("() => document.getElementById('h-rounds').hidden") is True
    assert page.errors == []


def test_markup_in_a_skill_stays_text(chromium, tmp_path):
    page = _file_page(chromium, write_html(hostile_run(tmp_path / "run"), tmp_path / "run.html"))
    page.page.evaluate("() => { for (const d of document.querySelectorAll('details')) d.open = true; }")
    assert page.js("() => window.__pwned") is None
    assert page.js("() => document.querySelectorAll('main img, main script, [onclick], [onerror]').length") == 0
    text = page.js("() => document.getElementById('app').textContent")
    assert INITIAL.splitlines()[1] in text and CANDIDATE.splitlines()[2] in text
    assert page.js("() => document.scripts.length") == 3  # the data, plotly.js, the page's own


class GatedResponder(ToyResponder):
    """The toy models, holding every optimizer call back once the run has written its first
    round, until the test releases them: the page is looked at while the run is under way."""

    def __init__(self, events: Path) -> None:
        super().__init__()
        self.events = events
        self.release = threading.Event()

    def __call__(self, body: Any) -> str:
        if body_to_request(body).role is Role.OPTIMIZER and not self.release.is_set():
            written = self.events.read_text() if self.events.exists() else ""
            if written.count('"_type":"RoundStarted"') >= 2:
                self.release.wait(WAIT_MS / 1000)
        return super().__call__(body)


def _served(path: Path) -> tuple[DashboardServer, threading.Event, list[str]]:
    said: list[str] = []
    server = open_server(path, "127.0.0.1", 0, said.append)
    stop = threading.Event()
    server.source.refresh()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    threading.Thread(target=watch, args=(server, stop), daemon=True).start()
    return server, stop, said


def _url(server: DashboardServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host}:{port}/"


def test_the_live_page_grows_while_a_run_trains(chromium, tmp_path, monkeypatch):
    out = tmp_path / "live"
    responder = GatedResponder(out / "events.jsonl")
    server, stop, said = _served(out)
    with FakeAnthropicServer(responder=responder) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
        codes: list[int] = []
        train = threading.Thread(target=lambda: codes.append(stratune([
            "train", "--task", str(WORDS), "--scorer", "regex", "--target",
            "anthropic:claude-haiku-4-5", "--optimizer", "anthropic:claude-sonnet-4-6",
            "--out", str(out)])))
        try:
            page = Watched(chromium, _url(server))
            train.start()
            page.page.wait_for_selector("#rounds-table tr[data-round='1']", timeout=WAIT_MS)
            before = page.js("() => document.querySelectorAll('#rounds-table tr.round-first').length")
            page.js("() => { window.__kept = true; document.querySelector("
                    "'details[data-key=\"round-1\"]').open = true; window.scrollTo(0, 400); }")
            responder.release.set()
            page.page.wait_for_function("() => document.getElementById('status-line')"
                                        ".textContent.startsWith('finished')", timeout=WAIT_MS)
        finally:
            responder.release.set()
            train.join(WAIT_MS / 1000)
            stop.set()
            server.shutdown()
            server.server_close()
    assert codes == [0]
    after = page.js("() => document.querySelectorAll('#rounds-table tr.round-first').length")
    assert after > before
    assert page.js("() => [window.__kept, window.scrollY, window.stratune.updates > 0]") == [
        True, 400, True]
    assert page.js("() => document.querySelector('details[data-key=\"round-1\"]').open")
    assert page.errors == [] and all(u.startswith(_url(server)) for u in page.requests)
    assert any(line.startswith("run not finished") for line in said)


@pytest.mark.parametrize("state", ["missing", "unfinished", "damaged"])
def test_serve_says_in_one_line_what_is_wrong(chromium, tmp_path, state):
    run = tmp_path / "run"
    if state != "missing":
        shutil.copytree(DEMO, run)
        lines = (run / "events.jsonl").read_text().splitlines(keepends=True)
        if state == "unfinished":
            (run / "manifest.json").write_text((run / "manifest.json").read_text()
                                               .replace('"finished": true', '"finished": false'))
            (run / "events.jsonl").write_text("".join(lines[:30]))
        else:
            (run / "events.jsonl").write_text("".join(lines[:30]) + "{damaged\n")
    server, stop, said = _served(run)
    try:
        page = Watched(chromium, _url(server))
        line = page.js("() => document.getElementById('status-line').textContent")
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
    expected = {"missing": "no run or grid there yet", "unfinished": "run not finished",
                "damaged": "events.jsonl:31"}[state]
    assert expected in line and "\n" not in line
    assert len(said) == 1 and expected in said[0]
    assert page.errors == []


def test_an_agent_runs_episodes_show_their_calls_as_text(chromium, tmp_path):
    from tests.support.cli import stratune as toy_cli

    out = tmp_path / "run"
    done = toy_cli("train", "--task", "stock", "--limit", "8", "--max-turns", "2", "--tools",
                   "tests.test_dashboard_episodes:HOSTILE", "--target", "scripted:agent-target",
                   "--optimizer", "scripted:agent-optimizer", "--out", str(out))
    assert done.returncode == 0, done.stderr
    page = _file_page(chromium, write_html(out, tmp_path / "run.html"))
    page.page.evaluate("() => { for (const d of document.querySelectorAll('details')) d.open = true; }")
    assert page.js("() => window.__pwned") is None
    assert page.js("() => document.querySelectorAll('#sec-episodes script').length") == 0
    text = page.js("() => document.getElementById('sec-episodes').textContent")
    assert "<script>window.__pwned = 1</script> units of" in text
    assert "(not run: the turn limit)" in text and "turn limit (2 model turns)" in text
    assert not page.js("() => document.getElementById('h-episodes').hidden")
    shown = page.js("() => document.querySelectorAll('#sec-episodes details.episode').length")
    assert shown == len({(s, x) for e in raw_events(out) if e["_type"] == "ExecutionsCharged"
                         for s, x in e["pairs"]})
