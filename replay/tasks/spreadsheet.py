"""SpreadsheetBench: one Python program per task, run per case in the sandbox (docs/design.md,
"Tasks").

Layout: `<data>/SpreadsheetBench/{train,test}/tasks.json` (+ task_ids.json) with workbooks in
`<split>/<dir>/` (`dir` = "spreadsheet/<id>"). Every case's input and answer workbook is checked
at load time. The preview shown to the model is built at load time too, so `requests` is pure.

Scoring: the program (first fenced block, else the whole answer; its own INPUT_PATH= /
OUTPUT_PATH= lines dropped) runs once per case in the sandbox (`replay.tasks.sandbox`: it sees
a copy of the input and a fresh work directory, never the answer workbook); a case passes when
the run exits 0, writes OUTPUT_PATH and every answer cell equals the gold (rules in
`stratune_core.tasks.spreadsheet_compare`, read in a limited subprocess by `workbook_check`).
Score = 1 only if all cases pass; aux = mean cell accuracy. Strata = instruction_type|ilen_bucket.
Loading refuses, in one line naming what to install, on a machine with no sandbox tier.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import openpyxl
from attrs import field, frozen

from llm_cache.records import Request, Response
from replay.tasks import files
from replay.tasks.sandbox import DEFAULT_LIMITS, Limits, TierName, choose, run_python
from replay.tasks.sandbox.layout import visible_to_program
from replay.tasks.workbook_check import DEFAULT_CHECK_LIMITS, CheckLimits, check, gold_cells
from stratune_core.records.base import Sample, Score, TaskInfo
from stratune_core.records.errors import TaskDataError
from stratune_core.tasks.common import Placement, Splits, head, target_request
from stratune_core.tasks.spreadsheet_compare import CellReport

FOLDER = "SpreadsheetBench"
MAX_TOKENS = 16384
PREVIEW_ROWS, PREVIEW_COLS, CELL_CAP, PREVIEW_CAP = 5, 20, 40, 20_000
_FENCE = re.compile(r"```[ \t]*(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
_PATH_LINE = re.compile(r"^\s*(INPUT_PATH|OUTPUT_PATH)\s*=.*$", re.MULTILINE)


@frozen(kw_only=True)
class Case:
    number: int
    input_path: Path
    gold_path: Path


@frozen(kw_only=True)
class SpreadsheetItem:
    instruction: str
    instruction_type: str
    answer_position: str
    cases: tuple[Case, ...] = field(converter=tuple)
    preview: str


def preview(path: Path) -> str:
    """Sheets with their sizes and the first rows as A1=value (formulas kept)."""
    wb = openpyxl.load_workbook(path, data_only=False, read_only=False)
    parts = []
    for ws in wb.worksheets:
        parts.append(
            f"## Sheet {ws.title!r} dims={ws.dimensions} max_row={ws.max_row} max_col={ws.max_column}"
        )
        for row in ws.iter_rows(min_row=1, max_row=min(ws.max_row, PREVIEW_ROWS),
                                max_col=min(ws.max_column, PREVIEW_COLS)):
            cells = [f"{c.coordinate}={str(c.value)[:CELL_CAP]}" for c in row if c.value is not None]
            if cells:
                parts.append(" | ".join(cells))
        if ws.max_row > PREVIEW_ROWS:
            parts.append(f"... ({ws.max_row - PREVIEW_ROWS} more rows)")
    text = "\n".join(parts)
    return text if len(text) <= PREVIEW_CAP else text[:PREVIEW_CAP] + "\n... (preview truncated)"


def user_prompt(item: SpreadsheetItem) -> str:
    return (
        f"# Instruction\n{item.instruction}\n\nInstruction type: {item.instruction_type}\n"
        f"Expected answer position: {item.answer_position}\n\n"
        f"# Input spreadsheet preview\n{item.preview}\n\n"
        "# Task\nWrite a Python script that reads the workbook from INPUT_PATH, applies the "
        "instruction and writes the result to OUTPUT_PATH. INPUT_PATH and OUTPUT_PATH are "
        "predefined variables. Preserve all other cells. The preview may be truncated: iterate "
        "over the actual rows. Return only a ```python code block."
    )


def extract_code(text: str) -> str:
    m = _FENCE.search(text)
    code = m.group(1) if m else text
    return _PATH_LINE.sub("", code)


def _case_report(code: str, item: SpreadsheetItem, case: Case, task: SpreadsheetTask) -> CellReport:
    tier = choose(task.sandbox)
    result = run_python(code, inputs={case.input_path.name: case.input_path},
                        input_name=case.input_path.name, limits=task.limits, tier=tier)
    out = result.output("output.xlsx")
    if not result.ok or out is None:
        why = ("timed out" if result.timed_out else result.limit
               or f"exit {result.exit_code}")
        if result.ok:  # exited 0, but OUTPUT_PATH is missing or not a regular file
            return CellReport(correct=0, total=0, error=f"program failed: {result.output_problem}")
        last = (result.stderr.strip().splitlines() or [result.output_problem])[-1]
        return CellReport(correct=0, total=0, error=f"program failed ({why}): {last[:160]}")
    with tempfile.TemporaryDirectory(prefix="stratune-check-") as tmp:
        written = Path(tmp) / "output.xlsx"
        written.write_bytes(out)
        return check(item.answer_position, case.gold_path, written, limits=task.check_limits)


@frozen(kw_only=True)
class SpreadsheetTask:
    splits: Splits
    initial_skill: str
    placement: Placement = field(default=Placement.SYSTEM, converter=Placement.parse)
    max_tokens: int = MAX_TOKENS
    limits: Limits = DEFAULT_LIMITS
    check_limits: CheckLimits = DEFAULT_CHECK_LIMITS
    sandbox: TierName | None = None  # None: the strongest tier this machine offers

    @property
    def info(self) -> TaskInfo:
        return TaskInfo(name="spreadsheetbench", initial_skill=self.initial_skill,
                        success_threshold=1.0, binary=True, eps0=0.0025,
                        max_tokens=self.max_tokens, answer_markup=("```python",))

    def split(self, name: str) -> tuple[Sample, ...]:
        return self.splits.get(name)

    def requests(self, skill: str, sample: Sample, model: str) -> tuple[Request, ...]:
        return (target_request(skill=skill, user_text=user_prompt(sample.payload), model=model,
                               max_tokens=self.max_tokens, placement=self.placement),)

    def score(self, sample: Sample, responses: tuple[Response, ...]) -> Score:
        item: SpreadsheetItem = sample.payload
        code = extract_code(responses[0].text if responses else "")
        reports = [_case_report(code, item, case, self) for case in item.cases]
        passed = all(r.passed for r in reports)
        accuracy = sum(r.correct / r.total if r.total else 0.0 for r in reports) / len(reports)
        problems = []
        for case, r in zip(item.cases, reports, strict=True):
            if r.error:
                problems.append(f"case {case.number}: {r.error}")
            elif not r.passed:
                problems.append(f"case {case.number}: {r.total - r.correct}/{r.total} answer "
                                f"cells wrong ({'; '.join(r.mismatches[:2])})")
        summary = "" if passed else head("; ".join(problems), 300)
        return Score(value=1.0 if passed else 0.0, output=head(code), summary=summary,
                     aux=accuracy)

    def describe(self, sample: Sample) -> str:
        item: SpreadsheetItem = sample.payload
        return head(f"{item.instruction}\n(answer cells: {item.answer_position}; "
                    f"{len(item.cases)} case(s))")

    def expected(self, sample: Sample) -> str:
        item: SpreadsheetItem = sample.payload
        shown = gold_cells(item.answer_position, item.cases[0].gold_path)
        if not shown:  # feedback only: a gold file that cannot be read shows nothing
            return f"cells {item.answer_position} as in the answer workbook"
        return head(f"answer cells {item.answer_position}: " + "; ".join(shown), 300)


def _case(raw: object, task_dir: Path, where: str) -> Case:
    number = files.field(raw, "case", int, where)
    gold_key = "golden" if isinstance(raw, dict) and "golden" in raw else "answer"
    paths = []
    for key in ("input", gold_key):
        path = task_dir / files.field(raw, key, str, where)
        if not path.is_file():
            raise TaskDataError(f"{where}: field {key!r}: workbook {path} not found; SpreadsheetBench "
                                "workbooks ship as spreadsheet.tar.gz with the full data")
        paths.append(path)
    if visible_to_program(paths[1]):
        raise TaskDataError(f"{where}: answer workbook {paths[1]} lies inside a directory the "
                            "sandboxed program can read; move the data directory out of it")
    return Case(number=number, input_path=paths[0], gold_path=paths[1])


def load_split(root: Path, split: str, strata: dict[str, str]) -> tuple[Sample, ...]:
    folder = root / FOLDER / split
    source = folder / "tasks.json"
    raw = files.read_json(source, "SpreadsheetBench tasks.json")
    if not isinstance(raw, list):
        raise TaskDataError(f"{source}: expected a JSON array of tasks")
    samples = []
    for k, task in enumerate(raw):
        where = f"{source}: record {k}"
        tid = str(files.field(task, "id", (str, int), where))
        task_dir = folder / str(task.get("dir", f"spreadsheet/{tid}"))
        cases = tuple(_case(c, task_dir, f"{where} cases[{n}]")
                      for n, c in enumerate(files.field(task, "cases", list, where)))
        if not cases:
            raise TaskDataError(f"{where}: field 'cases': empty")
        item = SpreadsheetItem(
            instruction=files.field(task, "instruction", str, where),
            instruction_type=str(task.get("instruction_type", "")),
            answer_position=files.field(task, "answer_position", str, where),
            cases=cases,
            preview=preview(cases[0].input_path),
        )
        samples.append(Sample(id=tid, stratum=strata.get(tid, "all"), payload=item))
    if (folder / "task_ids.json").is_file():
        order = files.id_list(folder / "task_ids.json")
        by_id = {s.id: s for s in samples}
        missing = [i for i in order if i not in by_id]
        if missing:
            raise TaskDataError(f"{source}: task {missing[0]!r} of task_ids.json is missing")
        samples = [by_id[i] for i in order]
    return files.non_empty(samples, source)


def load(data_dir: str | Path | None, *, placement: str = "system", limit: int | None = None,
         limits: Limits = DEFAULT_LIMITS, sandbox: TierName | None = None) -> SpreadsheetTask:
    choose(sandbox)  # refuse now, in one line, if no sandbox can run the programs
    root = files.data_root(data_dir)
    strata = files.strata(root, "spreadsheetbench", ("instruction_type", "ilen_bucket"))
    return SpreadsheetTask(
        splits=Splits(name="spreadsheetbench",
                      train=files.limited(load_split(root, "train", strata), limit),
                      test=files.limited(load_split(root, "test", strata), limit)),
        initial_skill=files.initial_skill(root, "spreadsheetbench"),
        placement=Placement.parse(placement),
        limits=limits,
        sandbox=sandbox,
    )
