"""The page's last sections: tokens and cost by call kind (usage.json, as the terminal's cost
table lays it out), final selection with its scores, the learned skill with its parts and the
files of its Agent Skills folder."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from replay.dashboard.diffs import parts_of
from replay.dashboard.rounds_data import outcome
from replay.skills.agent_skill import OUT_DIR
from replay.viewer.costs import COLUMNS, CostTable
from replay.viewer.model import RunView

MAX_SHOWN = 64 * 1024  # a larger file of the skill folder is listed, not shown


def costs(usage: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not usage or not usage.get("rows"):
        return None
    table = CostTable(usage["rows"])
    chart = [{"kind": cells["call kind"], "model": cells["model"],
              "paid": float(row.get("cost_usd", 0.0)),
              "tokens": int(cells["in tok."].replace(",", "")) +
              int(cells["out tok."].replace(",", ""))}
             for cells, row in zip(table.cells, usage["rows"], strict=False)]
    return {"columns": list(COLUMNS), "rows": [[cells[c] for c in COLUMNS] for cells in
                                               table.cells], "caption": table.caption,
            "chart": chart}


def final_selection(view: RunView, evaluation: Mapping[str, Any] | None) -> dict[str, Any]:
    finished = view.finished
    scores = (evaluation or {}).get("scores", {}) if isinstance(evaluation, dict) else {}
    return {
        "final": None if finished is None else {
            "id": finished.final_id, "reason": finished.reason.value,
            "rounds": finished.rounds, "spent": finished.spent, "budget": finished.budget},
        "initial": view.started.initial_skill_id if view.started else None,
        "comparisons": [{"candidate": e.candidate_id, "selected": e.selected_id,
                         "replaced": e.replaced, "selection": outcome(e.selection),
                         "confirmation": outcome(e.confirmation)} for e in view.final],
        "test": None if not scores else {
            "split": str((evaluation or {}).get("split", "test")),
            "n": (evaluation or {}).get("n"),
            "scores": [[skill_id, value] for skill_id, value in scores.items()]},
    }


def _files(folder: Path) -> list[dict[str, Any]]:
    out = []
    for root, dirs, names in os.walk(folder):  # never follows a link out of the folder
        dirs.sort()
        for name in sorted(names):
            path = Path(root) / name
            entry: dict[str, Any] = {"path": str(path.relative_to(folder.parent))}
            if path.is_symlink():
                entry["link"] = os.readlink(path)
            else:
                data = path.read_bytes()
                entry["size"] = len(data)
                try:
                    entry["text"] = data.decode("utf-8") if len(data) <= MAX_SHOWN else None
                except UnicodeDecodeError:
                    entry["text"] = None
            out.append(entry)
    return out


def learned_skill(path: Path, view: RunView) -> dict[str, Any] | None:
    if view.finished is None:
        return None
    text = view.skills.get(view.finished.final_id)
    if text is None:
        return None
    skill_dir = path / OUT_DIR
    folders = sorted(p for p in skill_dir.iterdir() if p.is_dir() and not p.is_symlink()) \
        if skill_dir.is_dir() else []
    return {"id": view.finished.final_id, "text": text, "parts": parts_of(text),
            "files": [f for folder in folders for f in _files(folder)]}

