"""The run page's agent episodes (issue 49: "for agent runs, each episode's trajectory"): one per
execution the budget paid for, in the order paid, each read back from the run's cache with its
turns (the calls, their arguments and results, errors and unrun calls marked) and its final
answer or why there is none; a tool result holding markup is data, never markup; a run without
tools has no episodes. The page in a browser: tests/test_dashboard_browser.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.dashboard.page import document
from replay.dashboard.run_data import run_sections
from replay.dashboard.source import build_page
from replay.tools.declared import tool
from tests.support.cli import ROOT, stratune
from tests.support.dashboard import SCRIPT, raw_events

AGENT_RUN = ("train", "--task", "stock", "--limit", "8", "--max-turns", "2", "--target",
             "scripted:agent-target", "--optimizer", "scripted:agent-optimizer")


@pytest.fixture(scope="module")
def agent_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("agent") / "run"
    done = stratune(*AGENT_RUN, "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


def _paid(out: Path) -> list[tuple[str, str]]:
    """The oracle: each (skill, sample) the events charge, first time only, read as JSON."""
    pairs: list[tuple[str, str]] = []
    for e in raw_events(out):
        for skill, sample in e.get("pairs", ()) if e["_type"] == "ExecutionsCharged" else ():
            if (skill, sample) not in pairs:
                pairs.append((skill, sample))
    return pairs


def test_every_paid_episode_is_shown_with_its_calls_results_and_answer(agent_run):
    sections = run_sections(agent_run)
    shown = sections["episodes"]
    assert [(e["skill"], e["sample"]) for e in shown] == _paid(agent_run)
    assert sections["episodes_note"] == ""
    initial = raw_events(agent_run)[0]["initial_skill_id"]
    failed = next(e for e in shown if e["skill"] == initial)
    first, second = failed["turns"]
    (call,) = first["calls"]
    assert call["name"] in ("stock", "price") and call["error"]
    assert "no product" in call["result"] and call["arguments"].startswith('{"sku": "')
    assert second["calls"][0]["result"] is None  # the turn limit left it unrun
    assert failed["answer"] is None and "turn limit (2 model turns)" in failed["end"]
    assert failed["score"] == 0.0 and "reached the limit of 2 model turns" in failed["summary"]
    solved = next(e for e in shown if e["score"] == 1.0)
    assert solved["answer"] == solved["expected"] and solved["end"] == "final answer"
    assert not solved["turns"][0]["calls"][0]["error"]


@tool
def stock(sku: str) -> str:
    """Units in stock, written as markup.

    Args:
        sku: the product code
    """
    return f"{SCRIPT} units of {sku}"


HOSTILE = [stock]


def test_markup_in_a_tool_result_is_data_in_the_page(tmp_path):
    out = tmp_path / "run"
    done = stratune(*AGENT_RUN, "--tools", "tests.test_dashboard_episodes:HOSTILE",
                    "--out", str(out))
    assert done.returncode == 0, done.stderr
    results = [c["result"] for e in run_sections(out)["episodes"] for t in e["turns"]
               for c in t["calls"]]
    assert any(r is not None and r.startswith(SCRIPT) for r in results)
    page = build_page(out)
    html = document(page.kind, page.title, page.sections)
    data = html[html.index('id="stratune-data">'):html.index("</script>")]
    assert "<" not in data.removeprefix('id="stratune-data">') and "__pwned" in data


def test_a_run_without_tools_has_no_episodes():
    sections = run_sections(ROOT / "traces" / "demo")
    assert sections["episodes"] == [] and sections["episodes_note"] == ""
