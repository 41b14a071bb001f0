"""A run page's data, one JSON-ready section per part of the page, built from the same typed
records as `stratune view` (`replay.viewer.show.load_run`: the manifest, the events through the
trace converter, usage.json, evaluation.json, the seal) and `compare` (the method's name).

Sections are plain data (strings, numbers, lists, dicts); the page renders them as text, so
nothing here escapes anything. A live page gets the sections whose data changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replay.compare.runs import Run, method_of
from replay.dashboard.episodes_data import episodes
from replay.dashboard.executions import FailureReader
from replay.dashboard.rounds_data import method_steps, rounds
from replay.dashboard.skill_data import costs, final_selection, learned_skill
from replay.rundir import seal
from replay.rundir.serde import manifest_to_data
from replay.rundir.trace import CELL_FILE, RunDir
from replay.viewer.costs import totals
from replay.viewer.method_view import curve_points
from replay.viewer.model import RunView
from replay.viewer.show import LoadedRun, load_run

LEVEL = {seal.Integrity.INTACT: "ok", seal.Integrity.ALTERED: "error",
         seal.Integrity.UNSEALED: "warn"}


def method_label(path: Path, run: LoadedRun) -> str:
    """The paper's name for the run's method or ablation, as `compare` prints it."""
    assert run.manifest is not None
    cell = RunDir.at(path).read_json(path / CELL_FILE)
    record = Run(path=path, record=run.manifest, manifest=manifest_to_data(run.manifest),
                 events=run.events, usage=run.usage, evaluation=run.evaluation,
                 coords=cell if isinstance(cell, dict) else None)
    return method_of(record)


def status_line(run: LoadedRun) -> dict[str, str]:
    view = run.view
    if view.finished is None:
        spent = f"{view.spent}/{view.started.budget}" if view.started else str(view.spent)
        return {"level": "warn", "text": f"run not finished: {len(view.rounds)} rounds so far, "
                f"{spent} executions spent"}
    check = run.check
    if check is None:
        return {"level": "ok", "text": "finished"}
    return {"level": LEVEL[check.integrity], "text": f"finished; check: {check.detail}"}


def header(path: Path, run: LoadedRun) -> list[list[str]]:
    manifest, view = run.manifest, run.view
    assert manifest is not None
    budget = view.started.budget if view.started else 0
    rows = [["task", manifest.task.spec], ["target", manifest.target],
            ["optimizer", manifest.optimizer], ["method", method_label(path, run)],
            ["profile", manifest.profile], ["seed", str(manifest.seed)],
            ["budget", f"{view.spent} / {budget} executions"]]
    if run.usage and run.usage.get("rows"):
        total = totals(run.usage["rows"])
        rows.append(["cost", f"${total['paid']:.4f} paid for {total['paid_calls']:,} calls · "
                     f"{total['hits']:,} answered from the cache (${total['cached']:.4f} "
                     "when recorded)"])
    else:
        rows.append(["cost", "usage.json not written yet (written when the run ends)"])
    rows.append(["seal", "—" if run.check is None else run.check.detail])
    before, after = test_scores(view, run.evaluation)
    rows.append(["test", "—" if after is None else
                 f"{'—' if before is None else f'{before:.3f}'} → {after:.3f}"])
    if view.finished is not None:
        rows.append(["stop", view.finished.reason.value])
    return rows


def trajectory(run: LoadedRun) -> dict[str, Any]:
    view = run.view
    budget = view.started.budget if view.started else 0
    if run.is_baseline:
        points = [{"spent": spent, "score": score, "accepted": kept, "label": ""}
                  for spent, score, kept in curve_points(run.events)]
        return {"budget": budget, "points": points,
                "title": "current skill's validation score (▲: update kept)"}
    points = []
    for r in view.rounds:
        if r.batch is None or r.batch.skill_id != r.current_id:
            continue
        op = r.operator
        label = "skipped" if op is None else op.strategy.value + (
            f"+{op.form.value}" if op.form else "")
        points.append({"round": r.index + 1, "spent": r.spent_start,
                       "score": r.batch.mean_score, "accepted": r.accepted, "label": label})
    return {"budget": budget, "points": points,
            "title": "current skill's score on each round's batch (▲: accepted a candidate)"}


def run_sections(path: Path, failures: FailureReader | None = None) -> dict[str, Any]:
    """Every section of the run page. `failures` is kept by a live page between reads."""
    run = load_run(path)
    own = failures is None
    if failures is None:
        assert run.manifest is not None
        failures = FailureReader(path, run.manifest)
    try:
        shown, note = episodes(run.events, failures)
        return {
            "status": status_line(run),
            "header": header(path, run),
            "trajectory": trajectory(run),
            "rounds": [] if run.is_baseline else rounds(run.view, failures),
            "steps": method_steps(run.events) if run.is_baseline else [],
            "failures_note": failures.note,
            "costs": costs(run.usage),
            "final": final_selection(run.view, run.evaluation),
            "skill": learned_skill(path, run.view),
            "episodes": shown,
            "episodes_note": note,
        }
    finally:
        if own:
            failures.close()


def test_scores(view: RunView, evaluation: Any) -> tuple[float | None, float | None]:
    """The initial and the final skill's scores in evaluation.json (0-1), None where absent."""
    scores = (evaluation or {}).get("scores", {}) if isinstance(evaluation, dict) else {}
    initial = view.started.initial_skill_id if view.started else None
    final = view.finished.final_id if view.finished else None
    return scores.get(initial), scores.get(final)
