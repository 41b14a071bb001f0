"""The viewer renders every event type, at a fixed width, with nothing machine-specific.

Renderables are printed into `Console(record=True, width=100, file=io.StringIO())` and compared
as text: substrings for facts, one golden file for the full summary screen
(regenerate with STRATUNE_UPDATE_GOLDEN=1 after a deliberate layout change)."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest
from rich.console import Console

import stratune_core.state.events as ev
from replay.rundir.serde import Manifest, TaskSpec
from replay.viewer import build_view, candidate_detail, event_line, round_detail, summary
from replay.viewer.charts import strip_by_round, trajectory
from replay.viewer.show import show
from stratune_core.config.knobs import Config
from stratune_core.methods.gepa_events import GepaIteration
from stratune_core.methods.iter_cot_events import ExemplarsChosen, RevisionRound, SummaryChecked
from stratune_core.methods.skillopt_events import EditsSelected, EpochReviewed
from stratune_core.methods.trace2skill_events import ConsolidationDone, LessonsExtracted
from stratune_core.records.errors import StraTuneError
from stratune_core.round.registry import TRACE_EVENT_TYPES
from tests.test_trace import C, D, sample_events

GOLDEN = Path(__file__).parent / "golden" / "viewer_summary.txt"


def render(renderable, width: int = 100) -> str:
    console = Console(record=True, width=width, file=io.StringIO(), color_system="truecolor")
    console.print(renderable)
    return console.export_text()


EXPECTED = {
    ev.RunStarted: "run started: task toy, 48 training samples, budget 288 (reserve 72)",
    ev.SkillAdded: "added",
    ev.RoundStarted: "round 1 started: epoch 1, batch 0",
    ev.ExecutionsCharged: "new,",
    ev.BatchExecuted: "1/3 solved, mean score 0.333",
    ev.OperatorChosen: "operator I3+F1 by llm: failures share one marker",
    ev.RoundSkipped: "round 2 skipped: F2 has no material this round",
    ev.FeedbackPrepared: "feedback prepared on 2 failures: 2 diagnosed, 1 verified of 2 checkable",
    ev.CandidateGenerated: "I3+F1 “uppercase rule”",
    ev.CandidateInvalid: "invalid I3+F2 draft: ungrounded_example (s999 is not a sample)",
    ev.DraftsRanked: "I3 drafts ranked vs",
    ev.StageResult: "screening of",
    ev.CandidateUnaffordable: "validation of",
    ev.CandidateDecided: "decision on",
    ev.CandidatePruned: "dropped from the saved pool",
    ev.SkillReplaced: "current skill",
    ev.RefinementAdvanced: "refinement held",
    ev.WarmupRound: "warm-up: 7 solved samples known of 18 wanted; warm-up goes on",
    ev.ResidualsPooled: "residual pooling: 3 known failures added to the batch's 2",
    ev.FeedbackExtended: "feedback blocks: 3 contrast, since s0 +2 -1 (4 failing), "
                         "1 trajectories, 2 gold pairs, 3 stats",
    ev.StrategiesNarrowed: "menu narrowed to I1, I2 (I3 unaffordable with 40 left)",
    ev.FixesAnnotated: "verified fixes: 1 verified, 1 unverified",
    ev.WindowSubmitted: "I2 window full (1 drafts): submitted",
    ev.RefinementKept: "refinement kept: intermediate",
    ev.FinalComparison: "does not replace",
    ev.RunFinished: "run finished (budget) after 2 rounds",
    ev.SmokeFailed: "7 of 8 solved samples broken, 0 kept: rejected",
    ev.SmokePassed: "2 of 8 solved samples broken, 1 kept: screening goes on",
    ev.FutilityStopped: "stopped after 6 samples: Δ -0.250 W/L 1/3",
    ev.ProbationOpened: "4 changed samples; screened again on 6 more",
    ev.CandidateBranched: "W/L 5/4 over 2/3 strata, saved without acceptance",
    ev.RuleChecked: "fails on guard_severe 2 vs 1",
    ev.RankingSmokeFailed: "killed on 4 ranking samples: 0.000 < 0.25 x 0.500",
    ev.ScreeningDeferred: "3 of 6 solved and 18 of 18 random samples: screened next round",
    ev.EarlyStopWaived: "epoch 1 accepted nothing, but I2 submitted in round 20: no early stop",
    ev.SeatRefused: "gets no final-selection seat (12 samples in common)",
    ev.SalvageAttempted: "(3 rescues): no usable merge",
    ev.MethodStarted: "method textgrad",
    ev.SplitMade: "10 for updates, 2 for internal validation",
    ev.TargetExecuted: "rollout:",
    ev.ExecutionsRefused: "validation refused: 10 executions needed, 4 left",
    ev.SkillScored: "on validation: mean 0.500, 1/2 solved",
    ev.UpdateDecided: "reverted (0.250 vs 0.500)",
    RevisionRound: "revision 1: 1 of 3 corrected",
    SummaryChecked: "summary of s001 kept",
    ExemplarsChosen: "exemplars: s000, s001 from a pool of 5",
    LessonsExtracted: "2 lesson(s) from the failure on s002",
    ConsolidationDone: "consolidation seed 41 over 3 groups",
    ev.FinalChosen: "final choice",
    EditsSelected: "9 edits proposed, 4 after merging, 2 of at most 3 applied",
    EpochReviewed: "epoch 2 review",
    GepaIteration: "added to the pool (minibatch 1.00 -> 2.00, validation 0.500)",
    ev.GeneratorProposed: "gepa generator on 3 executions:",
}


def test_every_event_type_has_a_line():
    assert set(EXPECTED) == set(TRACE_EVENT_TYPES)
    rendered: dict[type, str] = {}
    for event in sample_events():
        text = render(event_line(event))
        assert text.strip() and text.strip() != type(event).__name__  # not the fallback
        rendered[type(event)] = rendered.get(type(event), "") + text
    for kind, text in rendered.items():
        assert EXPECTED[kind] in text, (kind.__name__, text)


def test_round_detail_shows_reasoning_checks_and_diffs():
    view = build_view(sample_events())
    text = render(round_detail(view, view.round(1)))
    assert "failures share one marker; sample broadly" in text  # selection reasoning
    assert "+When the word is marked [U], answer in UPPERCASE." in text  # diff vs parent
    assert "+Always answer in UPPERCASE." in text
    assert re.search(r"lb_d_s\s+0\.050\s+0\.500\s+pass", text)
    assert re.search(r"lb_d_s\s+0\.300\s+0\.500\s+FAIL", text)
    for event in view.round(1).events:  # the round's full event log
        assert render(event_line(event)).strip().splitlines()[0][:40] in text


def test_fallback_and_skip_appear_in_round_two():
    view = build_view(sample_events())
    text = render(round_detail(view, view.round(2)))
    assert "fallback: reply was not JSON" in text
    assert "skipped: F2 has no material this round" in text


def test_candidate_detail_has_verdict_and_full_text():
    view = build_view(sample_events())
    text = render(candidate_detail(view, view.candidate(D[:6]), full_text=True))
    assert "rej. screen" in text and "gain_below_threshold" in text
    assert "grounded in samples: s001" in text
    assert text.count("Always answer in UPPERCASE.") == 2  # in the diff and the full text


def test_strip_and_trajectory_mark_the_operators():
    view = build_view(sample_events())
    assert render(strip_by_round(view)).strip() == "operators: I3F1✓ I2F2"
    chart = render(trajectory(view))
    assert "▲" in chart  # round 1 accepted a candidate
    assert re.search(r"op\s+3", chart)


def _manifest() -> Manifest:
    return Manifest(task=TaskSpec(spec="toy"), target="scripted:toy-target",
                    optimizer="scripted:toy-optimizer", seed=3, config=Config(seed=3))


USAGE = {"rows": [
    {"kind": "target_execution", "model": "claude-haiku-4-5-20251001", "calls": 50,
     "paid_calls": 40, "cache_hits": 10, "usage": {"input_tokens": 40000, "output_tokens": 2000},
     "cached_usage": {"input_tokens": 10000, "output_tokens": 500}, "cost_usd": 0.05,
     "would_have_cost_usd": 0.0125, "priced": True},
    {"kind": "candidate_generation", "model": "claude-sonnet-4-5-20250929", "calls": 2,
     "paid_calls": 2, "cache_hits": 0, "usage": {"input_tokens": 8000, "output_tokens": 3000},
     "cached_usage": {}, "cost_usd": 0.069, "would_have_cost_usd": 0.0, "priced": True},
]}


def test_summary_matches_the_golden_screen():
    evaluation = {"split": "test", "scores": {C: 0.875, sample_events()[0].initial_skill_id: 0.5}}
    text = render(summary(build_view(sample_events()), _manifest(), USAGE, evaluation))
    for fact in ("task         toy", "seed         3 · profile paper · selector llm",
                 "budget used  50/288 executions", "rounds       2 (1 accepted)",
                 "test score 0.875 (initial 0.500)", "accepted", "rej. screen",
                 "target exec.", "50,000", "0.1190", "0.0125",
                 "$0.1190 paid for 42 calls · 10 answered from the cache ($0.0125"):
        assert fact in text, fact
    if os.environ.get("STRATUNE_UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")


def test_an_unfinished_run_still_renders():
    events = sample_events()[:12]
    text = render(summary(build_view(events)))
    assert "run not finished" in text
    assert "no usage.json" in text


def test_no_paths_or_times_in_a_recorded_run(tmp_path):
    from replay.viewer.show import load_run
    from tests.support.cli import record_in_process

    out = record_in_process(tmp_path / "run", test_split="test")
    run = load_run(out)
    text = render(summary(run.view, run.manifest, run.usage, run.evaluation))
    assert "rounds" in text and "tokens and cost by call kind" in text
    scores = run.evaluation["scores"]
    final_id = run.view.finished.final_id
    assert run.evaluation["split"] == "test" and run.evaluation["n"] == 24
    assert f"test score {scores[final_id]:.3f}" in text
    assert str(tmp_path) not in text and "/tmp" not in text
    assert not re.search(r"\d\d:\d\d:\d\d|20\d\d-\d\d-\d\d", text)


def test_exports(tmp_path):
    picture = summary(build_view(sample_events()))
    console = Console(file=io.StringIO(), width=100)
    svg = show(picture, console, export="svg", output=tmp_path / "v.svg")
    assert svg is not None and "<svg" in svg.read_text()
    html = show(picture, console, export="html", output=tmp_path / "v.html")
    assert html is not None and "operators:" in html.read_text()
    try:
        import cairosvg  # noqa: F401
    except (ImportError, OSError):
        with pytest.raises(StraTuneError, match="--export png needs an SVG converter"):
            show(picture, console, export="png", output=tmp_path / "v.png")
    else:
        png = show(picture, console, export="png", output=tmp_path / "v.png")
        assert png is not None and png.read_bytes()[:4] == b"\x89PNG"
