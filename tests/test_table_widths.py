"""`compare`, `view` and `plan` read at 60, 80 and 120 columns, on a terminal or not: no line
is wider than the console, and every number the tables hold is printed whole (tables wrap
text, split, or stack their rows instead of cutting cells)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console, RenderableType

from replay.compare.model import fmt_cell
from replay.compare.render import rich_table
from replay.compare.runs import load_runs
from replay.compare.tables import NAMES, build
from replay.models.specs import load_task
from replay.plan.estimate import make_plan, render_plan
from replay.run.options import RunOptions, build_config
from replay.rundir.serde import TaskSpec
from replay.viewer.fit import FitColumn, FitTable
from replay.viewer.show import load_run, renderable
from tests.support.cli import ROOT, stratune

TRACES = sorted(p for p in (ROOT / "traces").iterdir() if (p / "manifest.json").is_file())
WIDTHS = (60, 80, 120)


def _printed(picture: RenderableType, width: int) -> list[str]:
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(picture)
    return console.export_text().splitlines()


def _fits(lines: list[str], width: int) -> None:
    wide = [line for line in lines if len(line.rstrip()) > width]
    assert not wide, f"{len(wide)} lines over {width} columns: {wide[:2]}"


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_prints_every_number_whole(width: int) -> None:
    """Every cell of every table of the committed traces appears whole in the output."""
    tables = build(load_runs(TRACES), NAMES, ())
    for table in tables:
        lines = _printed(rich_table(table), width)
        _fits(lines, width)
        text = "\n".join(lines)
        assert "…" not in text, table.title
        for row in table.rows:
            for value, column in zip(row.cells, table.columns, strict=True):
                cell = fmt_cell(value, column)
                if column.kind != "text":
                    assert any(cell in line for line in lines), (table.title, column.title,
                                                                  cell)


def test_compare_in_a_pipe_at_80_columns() -> None:
    """`stratune compare traces/*` piped (not a terminal) at COLUMNS=80."""
    done = stratune("compare", *map(str, TRACES), COLUMNS="80")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    _fits(lines, 80)
    assert "…" not in done.stdout
    assert "207/288" in done.stdout and "79.91 (1)" in done.stdout  # the demo, Trace2Skill


def test_a_table_too_wide_to_split_stacks_its_rows() -> None:
    """On a console narrower than the key column and one more, each row becomes lines."""
    table = FitTable(columns=[FitColumn(header="Run"), FitColumn(header="Tokens", numeric=True)],
                     rows=[["traces/a-rather-long-name", "1,234,567"]])
    lines = _printed(table, 30)
    assert lines == ["Run: traces/a-rather-long-name", "Tokens: 1,234,567"]
    wide = _printed(table, 80)
    assert len(wide) == 5 and "1,234,567" in wide[3]


def test_split_tables_repeat_the_key_columns() -> None:
    columns = [FitColumn(header="Method"), *(FitColumn(header=f"Column {i}", numeric=True)
                                              for i in range(12))]
    rows = [["StraTune", *(f"{1000 * i + 0.5:,.1f}" for i in range(12))],
            ["I1 only", *(f"{i}.0" for i in range(12))]]
    lines = _printed(FitTable(columns=columns, rows=rows), 60)
    _fits(lines, 60)
    assert sum(line.strip().startswith("StraTune") for line in lines) >= 2
    for cell in rows[0][1:]:
        assert any(cell in line for line in lines), cell


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("trace", TRACES, ids=[t.name for t in TRACES])
def test_view_fits_and_keeps_its_numbers(trace: Path, width: int) -> None:
    run = load_run(trace)
    lines = _printed(renderable(run), width)
    _fits(lines, width)
    text = "\n".join(lines)
    assert f"{run.view.spent}/{run.view.started.budget}" in text
    total = run.usage["total"]
    # the "in tok." column counts the prompts of paid calls and of answers read from the cache
    inputs = sum(total.get(part, {}).get(k, 0) for part in ("usage", "cached_usage")
                 for k in ("input_tokens", "cache_read_tokens", "cache_write_tokens"))
    assert f"{inputs:,}" in text
    if run.is_baseline:
        return  # a baseline's curve is its validation score; the budget axis is StraTune's chart
    assert str(run.view.started.budget) in lines[-1] or any(
        line.rstrip().endswith(str(run.view.started.budget)) for line in lines)


@pytest.mark.parametrize("width", WIDTHS)
def test_plan_fits_and_keeps_its_numbers(width: int) -> None:
    options = RunOptions(task=TaskSpec(spec="demo"), target="anthropic:claude-haiku-4-5",
                         optimizer="anthropic:claude-sonnet-4-6")
    task = load_task(options.task)
    config = build_config(options, task)
    plan = make_plan(config, task)
    lines = _printed(render_plan(plan, config), width)
    _fits(lines, width)
    text = "\n".join(lines)
    for number in (plan.shape.budget, plan.shape.n_train,
                   f"{plan.target_usage.input_tokens:,}", f"{plan.optimizer_usage.output_tokens:,}"):
        assert str(number) in text, number
