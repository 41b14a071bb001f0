"""Benchmark: how much of the budget B a run spends, and the screening-set sizes it uses.

Three worlds, all with scripted models (no network):
- the toy world (tests/support/toy.py) with an optimizer that writes only valid candidates, at
  three budgets (150, 288 and 100 executions for 48 training samples);
- the toy world with the mixed optimizer (valid, harmful, noisy and broken candidates);
- the demo trace's configuration (`replay/data/demo/record_config.json`: the demo task's first 48
  training samples, budget 6x, seed 0) re-executed with the scripted demo models below.

Figure: over the runs that stopped for the budget, the largest unspent part of B in units of
one round (a batch plus one candidate screened, `RunShape.round_cost`); target < 1: a run that
stops for the budget leaves less than one round unspent.

Run: .venv/bin/python -m benchmarks.budget_use [--quick]  (quick: 12 samples, one mixed seed)
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import xxhash

from benchmarks.common import BenchResult, bench_parser, report, results_dir, toy_config
from llm_cache.records import Request, Response, Role, Usage
from replay.tasks.registry import load_task
from stratune_core.config.knobs import Config
from stratune_core.config.shape import run_shape
from stratune_core.records.enums import Stage
from stratune_core.records.errors import BudgetError
from stratune_core.records.task import Task
from stratune_core.round.run import RunResult, run
from stratune_core.state.candidate_events import StageResult
from tests.support.toy import InProcessLLM, ToyOptimizer, ToyTask

N_TRAIN = 48
BUDGETS = (150, 288, 100)  # for N_TRAIN samples; a quick run scales them to its size
DEMO_CONFIG = Path(__file__).resolve().parents[1] / "replay" / "data" / "demo" / "record_config.json"


def _h(text: str) -> int:
    return xxhash.xxh32_intdigest(text.encode())


class DemoModels:
    """Scripted models for the demo task. The target answers a sample correctly with a chance
    that grows with each conditional rule, procedure or worked example in the skill (and is
    zero under an unconditional 'Always' rule), decided by a hash of (skill, sample): so a rule
    helps on average and moves individual samples both ways, as real edits do. The optimizer
    writes distinct candidates in the asked form, most helpful, some harmful, some neutral."""

    def __init__(self, task: Task) -> None:
        self.expected: dict[str, tuple[str, str]] = {}
        for sample in task.split("train"):
            (request,) = task.requests("", sample, "demo-target")
            self.expected[request.user_text()] = (sample.id, task.expected(sample))

    def complete(self, requests: Sequence[Request]) -> tuple[Response, ...]:
        return tuple(self._one(r) for r in requests)

    def _one(self, request: Request) -> Response:
        text = self._target(request) if request.role is Role.TARGET else self._optimizer(request)
        return Response(text=text, usage=Usage(input_tokens=100, output_tokens=20))

    def _target(self, request: Request) -> str:
        sample_id, answer = self.expected.get(request.user_text(), ("?", "?"))
        skill = request.system
        helpful = sum(1 for line in skill.splitlines()
                      if line.startswith(("When ", "Procedure", "[train-")))
        chance = 0 if "Always" in skill else min(90, 20 + 12 * helpful)
        right = _h(f"{sample_id}|{skill}") % 100 < chance
        return f"<answer>{answer if right else 'not sure'}</answer>"

    def _optimizer(self, request: Request) -> str:
        prompt = request.messages[0].text()
        h = _h(prompt + str(len(request.messages)))
        if '"strategy"' in prompt:
            allowed = re.findall(r'"(I[123])"', prompt.split('"strategy"', 1)[1])[:3] or ["I1"]
            forms = re.findall(r'"(F[1-4])"', prompt.split('"form"', 1)[1])[:4] or ["F1"]
            return json.dumps({"strategy": allowed[h % len(allowed)],
                               "form": forms[(h // 3) % len(forms)], "why": "scripted"})
        only = re.search(r"in form (F\d) only", prompt)
        form = only.group(1) if only else ("F1", "F2", "F3", "F4")[h % 4]
        skill = re.search(r"<skill>\n(.*?)\n</skill>", prompt, re.S)
        rule = (f"Always answer in capitals ({h % 97})." if h % 7 == 0 else
                f"Note {h % 997}: read the document twice." if h % 7 == 1 else
                f"When the question asks for a value (case {h % 997}), copy it exactly.")
        if form == "F2":
            lines = re.findall(r"^\[train-[^\]]+\] .*$", prompt, re.M)
            if lines:
                return (f"<candidate><form>F2</form><theme>example</theme>"
                        f"<edit op=\"append\">\n{lines[h % len(lines)]}\n</edit></candidate>")
            form = "F1"
        if form == "F4":
            body = f"<rewrite>\n{skill.group(1) if skill else ''}\n{rule}\n</rewrite>"
        elif form == "F3":
            body = f'<edit op="append">\nProcedure {h % 997}: find the field, then {rule}\n</edit>'
        else:
            body = f'<edit op="append">\n{rule}\n</edit>'
        return f"<candidate><form>{form}</form><theme>scripted</theme>{body}</candidate>"


def screening_sizes(result: RunResult) -> list[int]:
    return [len(e.sample_ids) for e in result.events
            if isinstance(e, StageResult) and e.outcome.stage is Stage.SCREENING]


def describe(result: RunResult, config: Config, task: Task) -> dict[str, Any]:
    round_cost = run_shape(config, len(task.split("train"))).round_cost
    return {
        "spent": result.spent, "budget": result.budget, "rounds": result.rounds,
        "stop": result.stop_reason.value, "unspent": result.budget - result.spent,
        "round_cost": round_cost, "screening_sizes": screening_sizes(result),
    }


def demo_config() -> Config:
    # The record spells the strategy floors flat (`floor_i2_frac`), as run manifests did before
    # the mechanisms were records; `replace` reads flat keys, switches first.
    record = json.loads(DEMO_CONFIG.read_text(encoding="utf-8"))
    return Config(seed=0, target_model="demo-target",
                  optimizer_model="demo-optimizer").replace(**record)


def measure(n_train: int = N_TRAIN, seeds: int = 3) -> BenchResult:
    runs: dict[str, dict[str, Any]] = {}
    good = InProcessLLM(optimizer=ToyOptimizer(style="good"))
    toy = ToyTask(n_train=n_train)
    for budget in (round(b * n_train / N_TRAIN) for b in BUDGETS):
        config = toy_config(budget=budget)
        try:
            runs[f"toy good B={budget}"] = describe(run(config, toy, good), config, toy)
        except BudgetError as exc:  # a refused budget is a figure too
            runs[f"toy good B={budget}"] = {"error": str(exc)}
    for seed in range(seeds):
        config = toy_config(seed=seed)
        runs[f"toy mixed seed={seed}"] = describe(run(config, toy, InProcessLLM()), config, toy)
    task = load_task("demo", limit=n_train)
    config = demo_config()
    runs["demo config, scripted"] = describe(run(config, task, DemoModels(task)), config, task)
    stops = [r for r in runs.values() if r.get("stop") == "budget"]
    worst = max((r["unspent"] / r["round_cost"] for r in stops), default=0.0)
    spent = ", ".join(f"{name.split(' ', 1)[1] if name.startswith('toy good') else name}: "
                      f"{r['spent']}/{r['budget']}" for name, r in runs.items() if "spent" in r)
    return BenchResult(
        name="budget_use", figure=round(worst, 3), target=1.0, unit=" rounds", strict=True,
        summary=f"budget stops leave at most {worst:.2f} of a round unspent; spent {spent}",
        details={"n_train": n_train, "runs": runs},
    )


def main(argv: Sequence[str] | None = None) -> BenchResult:
    args = bench_parser(__doc__).parse_args(argv)
    measured = measure(12, seeds=1) if args.quick else measure()
    result = report(measured, results_dir(args))
    for name, r in result.details["runs"].items():
        print(f"  {name}: " + (r["error"] if "error" in r else
              f"{r['spent']}/{r['budget']} spent, {r['rounds']} rounds, stop {r['stop']}, "
              f"screening sets {r['screening_sizes']}"))
    return result


if __name__ == "__main__":
    main()
