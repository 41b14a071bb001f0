"""`stratune compare` over StraTune and all five baselines on a priced pair: the cost and token
figures count every kind of call a run paid for (the baselines' reflections, skill updates and
summaries too), checked against each run's usage.json split by model, not by kind; methods in
the paper's order; no baseline among the ablations; the ranks readable in a pipe."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from pathlib import Path

import pytest
from rich.console import Console

from replay.commands.app import main as stratune
from replay.compare.model import Table
from replay.compare.runs import BASELINE_LABELS, Run, load_runs, method_of
from replay.compare.tables import build
from replay.compare.tokens import TOTAL, TRAINING_TOTAL, training_tokens
from replay.grid.grid_file import load_grid
from replay.grid.run import run_grid
from tests.grid_support import MethodsEnv, write_grid

TARGET, OPTIMIZER = "anthropic:claude-haiku-4-5", "anthropic:claude-sonnet-4-6"  # priced
PAPER_ORDER = ["Initial skill", "GEPA", "TextGrad", "SkillOpt", "Trace2Skill", "Iter-CoT",
               "StraTune"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, list[Run]]:
    base = tmp_path_factory.mktemp("costs")
    path = write_grid(base / "grid.toml", ablations='full = {}\ni1 = { selector = "fixed:I1" }\n',
                      seeds="[0]", limit=24, target=TARGET, optimizer=OPTIMIZER,
                      extra='methods = ["iter-cot", "trace2skill", "skillopt", "textgrad", '
                            '"gepa"]')
    result = run_grid(load_grid(path), base / "out", Console(file=io.StringIO()),
                      env=MethodsEnv())
    assert result.code == 0 and result.stopped is None
    return base / "out", load_runs([base / "out"])


def table(tables: list[Table], table_id: str) -> Table:
    return next(t for t in tables if t.id == table_id)


def usage_rows(run: Run) -> list[dict]:
    return json.loads((run.path / "usage.json").read_text(encoding="utf-8"))["rows"]


def paid(rows: list[dict]) -> float:
    return sum(r["cost_usd"] + r["would_have_cost_usd"] for r in rows)


def tokens(rows: list[dict]) -> int:
    return sum(r[part][k] for r in rows for part in ("usage", "cached_usage")
               for k in ("input_tokens", "output_tokens", "cache_read_tokens",
                         "cache_write_tokens"))


def test_the_runs_pay_for_the_baselines_own_call_kinds(runs):
    """The premise of the checks below: these runs did pay for kinds StraTune never makes."""
    _, found = runs
    kinds = {row["kind"] for run in found for row in usage_rows(run)}
    assert {"reflection", "skill_update", "summary"} <= kinds
    assert all(paid(usage_rows(run)) > 0 for run in found)


def test_cost_by_kind_holds_every_kind_and_the_whole_cost(runs):
    _, found = runs
    costs = table(build(found, ["cost_by_kind"]), "cost_by_kind")
    groups: dict[str, dict[str, tuple]] = defaultdict(dict)
    for row in costs.rows:
        groups[row.group or ""][row.cells[0]] = row.cells
    for run in found:
        rows = usage_rows(run)
        shown = next(cells for group, cells in groups.items()
                     if f"— {method_of(run)} (mean of 1 runs)" in group)
        by_kind = defaultdict(list)
        for row in rows:
            by_kind[row["kind"]].append(row)
        assert set(shown) == {*by_kind, TRAINING_TOTAL, TOTAL}, method_of(run)
        for kind, kind_rows in by_kind.items():
            assert shown[kind][6] == pytest.approx(paid(kind_rows)), (method_of(run), kind)
        training = [r for r in rows if r["kind"] != "test_evaluation"]
        assert shown[TRAINING_TOTAL][6] == pytest.approx(paid(training))
        total = json.loads((run.path / "usage.json").read_text(encoding="utf-8"))["total"]
        assert shown[TOTAL][6] == pytest.approx(total["cost_usd"] + total["would_have_cost_usd"])
        assert shown[TOTAL][1] == total["calls"]
    everything = groups[f"all {len(found)} runs (sum)"]
    assert everything[TRAINING_TOTAL][6] == pytest.approx(
        sum(paid([r for r in usage_rows(run) if r["kind"] != "test_evaluation"])
            for run in found))


def test_training_tokens_split_the_calls_by_the_model_that_made_them(runs):
    """Target (M) and Optimizer (M) of each method against usage.json's rows by model: the
    target's summaries (Iter-CoT) are the target's, every reflection or update the
    optimizer's."""
    _, found = runs
    baselines = [run for run in found if method_of(run) in BASELINE_LABELS.values()]
    shown = {row.cells[1]: row.cells for row in training_tokens(baselines).rows}
    assert set(shown) == set(BASELINE_LABELS.values())
    for run in baselines:
        training = [r for r in usage_rows(run) if r["kind"] != "test_evaluation"]
        config = run.record.config
        target, optimizer = (tokens([r for r in training if r["model"] == model])
                             for model in (config.target_model, config.optimizer_model))
        assert target + optimizer == tokens(training)  # no third model
        cells = shown[method_of(run)]
        assert cells[2] * 1e6 == pytest.approx(target), method_of(run)
        assert cells[3] * 1e6 == pytest.approx(optimizer), method_of(run)


def test_methods_follow_the_papers_order(runs):
    _, found = runs
    tables = build(found, ["methods", "main"])
    assert [row.cells[0] for row in table(tables, "methods").rows] == PAPER_ORDER
    main = [row.cells[0] for row in table(tables, "main").rows]
    assert main == [*PAPER_ORDER, "I1 only"]


@pytest.mark.parametrize("by", [(), ("seed",)])
def test_a_baseline_is_never_an_ablation(runs, by):
    _, found = runs
    ablations = table(build(found, ["ablations"], by), "ablations")
    groups = {row.group for row in ablations.rows}
    labels = [row.cells[0] for row in ablations.rows]
    if not by:
        assert labels == ["StraTune", "I1 only"] and "Other" not in groups
    # grouped by seed, only StraTune's two runs may be counted
    assert all(stat.n <= 2 for row in ablations.rows for stat in row.cells[1::3])
    assert not set(labels) & set(BASELINE_LABELS.values())


def _best_two(found: list[Run]) -> tuple[set[str], set[str]]:
    """The methods with the highest and those with the second highest (distinct) final test
    score, from evaluation.json and the last event."""
    scores = {}
    for run in found:
        final = json.loads((run.path / "events.jsonl").read_text().splitlines()[-1])["final_id"]
        score = json.loads((run.path / "evaluation.json").read_text())["scores"][final]
        scores[method_of(run)] = round(100 * score, 6)
    methods = {m: s for m, s in scores.items() if m in PAPER_ORDER}
    top = sorted(set(methods.values()), reverse=True)
    assert len(top) >= 2, "the scripted runs need two distinct scores to rank"
    return ({m for m, s in methods.items() if s == top[0]},
            {m for m, s in methods.items() if s == top[1]})


def test_best_and_second_best_are_marked_in_plain_text(runs, capsys):
    root, found = runs
    best, second = _best_two(found)
    assert stratune(["compare", str(root), "--table", "methods"]) == 0  # captured: no terminal
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()
             if line.strip() and line.split()[0] in PAPER_ORDER}
    marks = {m: line.rstrip()[-1] for m, line in lines.items()}
    assert {m for m, mark in marks.items() if mark == "*"} == best
    assert {m for m, mark in marks.items() if mark == "†"} == second
    assert stratune(["compare", str(root), "--table", "methods", "--format", "csv"]) == 0
    rows = list(csv.reader(line for line in capsys.readouterr().out.splitlines()
                           if not line.startswith("#")))
    assert rows[0][-1] == "toy rank"
    ranks = {row[1]: row[-1] for row in rows[1:]}
    assert {m for m, mark in ranks.items() if mark == "*"} == best
    assert {m for m, mark in ranks.items() if mark == "†"} == second
    assert stratune(["compare", str(root), "--table", "methods", "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert {line.split(" | ")[0].removeprefix("| ") for line in markdown.splitlines()
            if line.endswith(r"** \* |")} == best
