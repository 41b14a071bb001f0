"""`stratune compare`: every table's numbers checked against values computed here, separately,
from the runs' files (events, evaluation.json) and, for tokens, from the calls the scripted
models actually answered (counted as they were made, not read from usage.json)."""

from __future__ import annotations

import csv
import io
import json
import re
import statistics
import textwrap
from collections import defaultdict
from pathlib import Path

import pytest
from rich.console import Console

from replay.commands.app import main as stratune
from replay.compare.model import Stat, Table
from replay.compare.runs import load_runs
from replay.compare.tables import build
from replay.grid.grid_file import load_grid
from replay.grid.run import run_grid
from stratune_core.prompts.templates import SELECTION_SYSTEM
from tests.grid_support import OPTIMIZER, TARGET, ScriptedEnv

LABELS = {"full": "StraTune", "i1": "I1 only", "rot": "Rot.", "rep": "Replay",
          "ucb": "Bandit, UCB1", "nv": "No valid.", "I3+F3": "I3+F3"}
PRICED = ("anthropic:claude-haiku-4-5", "anthropic:claude-sonnet-4-6")


class TokenCountingEnv(ScriptedEnv):
    """Adds up, per cell, the tokens of every training call the scripted models answer."""

    def __init__(self) -> None:
        super().__init__()
        self.tokens: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))

    def backends(self, cell):
        backends = super().backends(cell)
        for backend in backends.values():
            backend.fn = self._count(cell.id, backend.fn)
        return backends

    def _count(self, cell_id, fn):
        def counted(request):
            response = fn(request)
            if re.search(r"Word: \S*1\d{3} \[", request.user_text()):
                return response  # a test-split sample: test evaluation, not training
            if request.role.value == "target":
                kind = "target"
            elif request.system == SELECTION_SYSTEM:
                kind = "selection"
            else:
                kind = "generation"
            self.tokens[cell_id][kind] += response.usage.total
            self.tokens[cell_id][f"{kind}_calls"] += 1
            return response
        return counted


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    base = tmp_path_factory.mktemp("cmp")
    (base / "grid.toml").write_text(textwrap.dedent(f"""\
        seeds = [0, 1]
        test_eval = true
        [tasks.toy]
        task = "toy"
        limit = 24
        [tasks.toy-big]
        task = "toy"
        limit = 30
        [pairs.scripted]
        target = "{TARGET}"
        optimizer = "{OPTIMIZER}"
        [pairs.priced]
        target = "{PRICED[0]}"
        optimizer = "{PRICED[1]}"
        [ablations]
        full = {{}}
        i1 = {{ selector = "fixed:I1" }}
        rot = {{ selector = "rotation" }}
        rep = {{ selector = "replay:full" }}
        ucb = {{ selector = "bandit:ucb1" }}
        nv = {{ no-validation = true }}
        "I3+F3" = {{ operator = "I3+F3" }}
        """))
    env = TokenCountingEnv()
    result = run_grid(load_grid(base / "grid.toml"), base / "out", Console(file=io.StringIO()),
                      env=env)
    assert result.code == 0
    runs = load_runs([base / "out"])
    return base / "out", runs, {name: dict(t) for name, t in env.tokens.items()}


# ---- what the tables should say, computed from the files -------------------------------------


def cells(root: Path) -> list[dict]:
    out = []
    for coords_file in sorted(root.rglob("grid_cell.json")):
        cell = coords_file.parent
        coords = json.loads(coords_file.read_text())
        events = [json.loads(line) for line in (cell / "events.jsonl").read_text().splitlines()]
        manifest = json.loads((cell / "manifest.json").read_text())
        scores = json.loads((cell / "evaluation.json").read_text())["scores"]
        out.append({**coords, "events": events, "manifest": manifest,
                    "final": 100 * scores[events[-1]["final_id"]],
                    "initial": 100 * scores[events[0]["initial_skill_id"]],
                    "section": f"Target: {manifest['config']['target_model']} · "
                               f"Optimizer: {manifest['config']['optimizer_model']}"})
    return out


def mean_sd(values: list[float]) -> tuple[float, float | None, int]:
    return (statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else None,
            len(values))


def expected_scores(root: Path, which: str = "final") -> dict[tuple[str, str, str], tuple]:
    groups: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for cell in cells(root):
        groups[(cell["section"], LABELS[cell["ablation"]], cell["task"])].append(cell[which])
    return {key: mean_sd(values) for key, values in groups.items()}


def table(tables: list[Table], table_id: str) -> Table:
    return next(t for t in tables if t.id == table_id)


def row_of(t: Table, label: str, group_start: str) -> tuple:
    found = [r for r in t.rows if r.cells[0] == label and (r.group or "").startswith(group_start)]
    assert len(found) == 1, (label, group_start, [r.cells[0] for r in t.rows])
    return found[0].cells


def same(stat: Stat, want: tuple) -> bool:
    mean, sd, n = want
    return (stat.n == n and stat.mean == pytest.approx(mean)
            and (stat.sd is None if sd is None else stat.sd == pytest.approx(sd)))


# ---- the tests --------------------------------------------------------------------------------


def test_main_results(grid):
    root, runs, _ = grid
    t = table(build(runs), "main")
    assert [c.title for c in t.columns] == ["Method", "toy", "toy-big"]
    finals = expected_scores(root)
    for (section, label, task), want in finals.items():
        cells_ = row_of(t, label, section)
        assert same(cells_[1 + ["toy", "toy-big"].index(task)], want), (section, label, task)
    initial = expected_scores(root, "initial")
    for (section, _, task), (mean, _, _) in initial.items():
        stat = row_of(t, "Initial skill", section)[1 + ["toy", "toy-big"].index(task)]
        assert stat.mean == pytest.approx(mean) and stat.n == 2


def test_ablations_against_the_full_method(grid):
    root, runs, _ = grid
    t = table(build(runs), "ablations")
    finals = expected_scores(root)
    for (section, label, task), (mean, _, _) in finals.items():
        if label == "StraTune":
            continue
        cells_ = row_of(t, label, section)
        at = 1 + 3 * ["toy", "toy-big"].index(task)
        delta = mean - finals[(section, "StraTune", task)][0]
        assert cells_[at + 1] == pytest.approx(delta)
        assert cells_[at + 2] == ("=" if abs(delta) < 1e-9 else "+" if delta > 0 else "−")


def test_fixed_operators_and_bandits(grid):
    root, runs, _ = grid
    tables = build(runs)
    finals = expected_scores(root)
    fixed = [t for t in tables if t.id == "fixed_operators"]
    assert len(fixed) == 4  # two pairs x two datasets
    for t in fixed:
        section = t.title.split("(", 1)[1].rstrip(")")
        task = t.title.split(" test scores")[0]
        i3 = next(r.cells for r in t.rows if r.cells[0] == "I3 parallel sampling")
        assert same(i3[3], finals[(section, "I3+F3", task)])
        assert [s.n for r in t.rows for s in r.cells[1:]].count(0) == 11  # one operator run
    bandits = table(tables, "bandits")
    assert [r.cells[0] for r in bandits.rows[:5]] == [
        "StraTune, optimizer LLM", "Rot., fixed schedule", "Replay, copied sequence", "UCB1",
        "Initial skill"]
    for (section, label, task), want in finals.items():
        if label == "Bandit, UCB1":
            assert same(row_of(bandits, "UCB1", section)[1 + ["toy", "toy-big"].index(task)],
                        want)


def test_training_tokens_and_cost_by_kind(grid):
    root, runs, tokens = grid
    tables = build(runs)
    t = table(tables, "tokens")
    by_group: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for cell in cells(root):
        if cell["ablation"] == "full":
            by_group[(cell["section"], cell["task"])].append(tokens[cell["id"]])
    assert len(t.rows) == len(by_group) == 4
    for row in t.rows:
        counted = by_group[(row.group, row.cells[0])]
        target = statistics.fmean(c["target"] for c in counted)
        optimizer = statistics.fmean(c["selection"] + c["generation"] for c in counted)
        selection = statistics.fmean(c["selection"] for c in counted)
        assert row.cells[1] == "StraTune" and row.cells[9] == 2
        assert row.cells[2] == pytest.approx(target / 1e6)
        assert row.cells[3] == pytest.approx(optimizer / 1e6)
        assert row.cells[4] == pytest.approx(100 * optimizer / target)
        assert row.cells[5] == pytest.approx(statistics.fmean(c["selection_calls"]
                                                              for c in counted))
        assert row.cells[6] == pytest.approx(selection / 1e3)
        assert row.cells[7] == pytest.approx(100 * selection / optimizer)
        assert row.cells[8] == pytest.approx(100 * selection / target)
    costs = table(tables, "cost_by_kind")
    totals = [r for r in costs.rows if (r.group or "").startswith("all ")]
    want_calls = sum(c["target_calls"] for c in tokens.values())
    assert next(r for r in totals if r.cells[0] == "target_execution").cells[1] == want_calls
    priced = [r for r in costs.rows if "claude-haiku" in (r.group or "")]
    scripted = [r for r in costs.rows if "toy-target" in (r.group or "")]
    assert all(r.cells[6] > 0 for r in priced) and all(r.cells[6] == 0 for r in scripted)


def test_operator_sequences_and_budget(grid):
    root, runs, _ = grid
    tables = build(runs)
    sequences, budget = table(tables, "sequences"), table(tables, "budget")
    by_run = {r.cells[0]: r.cells for r in sequences.rows}
    spent: dict[tuple, list[int]] = defaultdict(list)
    for cell in cells(root):
        events = cell["events"]
        accepted = {e["round"] for e in events
                    if e["_type"] == "CandidateDecided" and e["verdict"] == "accepted"}
        chosen = [e for e in events if e["_type"] == "OperatorChosen"]
        steps = [e["strategy"] + (e["form"] or "") + ("✓" if e["round"] in accepted else "")
                 for e in chosen]
        row = by_run[cell["id"]]
        assert row[5] == " ".join(steps) and row[4] == len(steps)
        for i, strategy in enumerate(("I1", "I2", "I3")):
            share = 100 * sum(e["strategy"] == strategy for e in chosen) / len(chosen)
            assert row[6 + i] == pytest.approx(share)
        spent[(cell["section"], LABELS[cell["ablation"]], cell["task"])].append(
            (events[-1]["spent"], sum(e["_type"] == "RoundStarted" for e in events),
             sum(e["_type"] == "CandidateDecided" and e["verdict"] == "saved" for e in events),
             len(accepted)))
    for (section, label, task), values in spent.items():
        row = next(r.cells for r in budget.rows
                   if r.group == section and tuple(r.cells[:2]) == (task, label))
        assert row[2].mean == pytest.approx(statistics.fmean(v[0] for v in values))
        assert row[5].mean == pytest.approx(statistics.fmean(v[1] for v in values))
        assert row[7].mean == pytest.approx(statistics.fmean(v[2] for v in values))
        assert row[6].mean == pytest.approx(statistics.fmean(v[3] for v in values))
        assert row[8] == "2/2"


def _loose_copy(root: Path, out: Path) -> Path:
    """A grid cell's run directory without its cell file, blobs or test scores."""
    cell = root / "toy/scripted/full/seed0"
    for name in ("manifest.json", "events.jsonl", "usage.json"):
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes((cell / name).read_bytes())
    return out


def test_a_run_without_test_scores_shows_a_dash_never_zero(grid, tmp_path, capsys):
    root, _, _ = grid
    loose = _loose_copy(root, tmp_path / "loose")
    assert stratune(["compare", str(loose), "--format", "csv", "--table", "main"]) == 0
    rows = list(csv.reader(line for line in capsys.readouterr().out.splitlines()
                           if not line.startswith("#")))
    assert rows[0] == ["group", "Method", "toy mean", "toy sd", "toy n"]
    assert all(r[2:] == ["", "", "0"] for r in rows[1:])
    assert stratune(["compare", str(loose), "--table", "main"]) == 0
    shown = capsys.readouterr().out
    assert "—" in shown and " 0.00" not in shown


def test_the_formats_and_the_by_option(grid, capsys):
    root, runs, _ = grid
    assert stratune(["compare", str(root), "--format", "markdown", "--table", "main"]) == 0
    text = capsys.readouterr().out
    assert "| Method | toy | toy-big |" in text and "| Initial skill |" in text
    assert stratune(["compare", str(root), "--format", "latex", "--table", "ablations"]) == 0
    latex = capsys.readouterr().out
    assert r"\toprule" in latex and r"$\pm$" in latex and r"$\Delta$ toy" in latex
    assert stratune(["compare", str(root), "--by", "config.selector", "--table", "main",
                     "--format", "csv"]) == 0
    by = capsys.readouterr().out
    assert "config.selector=bandit:ucb1" in by and "config.selector=rotation" in by
    assert stratune(["compare", str(root), "--by", "config.nothing"]) == 2
    assert "--by config.nothing: not a manifest field" in capsys.readouterr().err
    assert stratune(["compare", str(root / "nowhere")]) == 2


def test_runs_side_by_side(grid):
    """The per-run table, each cell recomputed from the run's own files."""
    root, runs, _ = grid
    rows = {r.cells[0]: r.cells for r in table(build(runs, ["runs"]), "runs").rows}
    assert len(rows) == len(cells(root))
    for cell in cells(root):
        events, row = cell["events"], rows[cell["id"]]
        assert row[2] == 24 or row[2] == 30
        assert row[3] == pytest.approx(cell["initial"]) and row[4] == pytest.approx(cell["final"])
        decided = [e["verdict"] for e in events if e["_type"] == "CandidateDecided"]
        assert (row[5], row[6]) == (decided.count("accepted"), decided.count("saved"))
        assert row[7] == sum(e["_type"] == "RoundStarted" for e in events)
        assert row[8] == f"{events[-1]['spent']}/{events[0]['budget']}"
        refused = [e for e in events if e["_type"] == "CandidateInvalid"]
        assert row[9].split(" ")[0] == str(len(refused))
        usage = json.loads((root / cell["id"] / "usage.json").read_text())["rows"]
        tokens = {u["kind"]: sum(u[part][k] for part in ("usage", "cached_usage")
                                 for k in ("input_tokens", "output_tokens", "cache_read_tokens",
                                           "cache_write_tokens")) for u in usage}
        assert row[10] == pytest.approx(tokens.get("strategy_selection", 0) / 1000)
        assert row[11] == pytest.approx(tokens["target_execution"] / 1000)


def test_a_renamed_event_field_is_an_error_not_an_empty_row(grid, tmp_path, capsys):
    """compare reads typed events, with the converter `view` and `replay` use."""
    root, _, _ = grid
    loose = _loose_copy(root, tmp_path / "renamed")
    events = loose / "events.jsonl"
    assert '"verdict":' in events.read_text(encoding="utf-8")
    events.write_text(events.read_text(encoding="utf-8").replace('"verdict":', '"verdikt":'),
                      encoding="utf-8")
    assert stratune(["compare", str(loose), "--table", "budget"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "events.jsonl" in err and "verdikt" in err


def test_json_keeps_every_stat_as_numbers(grid, capsys):
    """`--format json`: the same tables as data, a stat cell with its mean, sd, n and rank, so a
    notebook reads the numbers without parsing "62.50 ± 5.89 (2)"."""
    root, _, _ = grid
    assert stratune(["compare", str(root), "--format", "json", "--table", "main"]) == 0
    (table,) = json.loads(capsys.readouterr().out)
    assert table["id"] == "main" and table["columns"][0]["title"] == "Method"
    stats = [cell for row in table["rows"] for cell in row["cells"] if isinstance(cell, dict)]
    assert stats and all({"mean", "sd", "n", "rank"} <= set(cell) for cell in stats)
    assert any(isinstance(cell["mean"], float) for cell in stats)
