"""Each `stratune` subcommand's handler: the parsed flags in, an exit code out. Heavy imports
(the runner, the backends, the viewer) happen inside the handler that needs them."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from llm_cache import cli as cache_cli
from replay.bridges.specs import normalized
from replay.input_files import resolved
from replay.stops import flags as controls
from replay.stops.hard_timeout import Watchdog
from replay.tasks.bundled import bundled_tools
from replay.tasks.registry import custom_path, shadowed_folder
from replay.tools.loading import split_spec
from stratune_core.records.errors import StraTuneError

if TYPE_CHECKING:
    from replay.rundir.serde import TaskSpec

EXIT_STOPPED = 3  # a stop control ended the run (runner.EXIT_STOPPED); resumable
WATCHDOG = Watchdog()


def _options(args: argparse.Namespace) -> Any:
    from replay.run.method_options import method_from_args
    from replay.run.options import RunOptions, parse_budget

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
    from replay.rundir.serde import TaskSpec

    spec = args.task
    if (note := shadowed_folder(spec)) is not None:
        # on stderr: stdout may be data (`plan --show-config`'s JSON)
        print(f"note: {note}", file=sys.stderr)
    path = custom_path(spec)
    if path is not None:
        # Stored absolute, so `replay` and `view` work from any directory.
        spec = str(resolved(path, "--task"))
    spec = normalized(spec, input_col=getattr(args, "input_col", None),
                      expected_col=getattr(args, "expected_col", None))
    skill = getattr(args, "skill_dir", None)  # evaluate's --skill is the skill it scores
    if "skill_dir" in args and skill is None and args.skill_parts:
        raise StraTuneError("--skill-parts: learns parts of an Agent Skills folder; give the "
                            "folder with --skill DIR")
    if skill is not None:
        skill = str(resolved(Path(skill).expanduser(), "--skill"))
    kind = _kind_for_target(getattr(args, "target", None) or "")
    # a harness's tools are its own (the CLI's); a bundled agent task's are for a model's call
    tools = split_spec(args.tools) if args.tools else (bundled_tools(spec) if kind is None
                                                       else ())
    if args.max_turns is not None and not tools and kind is None:  # a harness has its own
        raise StraTuneError("--max-turns: limits an agent episode's turns; give --tools too "
                            "(or a claude-code: target)")
    return TaskSpec(spec=spec, scorer=args.scorer, placement=args.placement, limit=args.limit,
                    skill=skill, skill_parts=args.skill_parts if skill is not None else (),
                    tools=tools, max_turns=args.max_turns,
                    kind=kind)


def _kind_for_target(target: str) -> str | None:
    from replay.targets.kinds import kind_for_target

    return kind_for_target(target)


def cmd_train(args: argparse.Namespace, console: Console) -> int:
    from replay.run import runner
    from replay.skills.agent_skill import learned_folder
    from replay.stops.control import parse_duration
    from replay.viewer.rounds import round_table
    from replay.viewer.show import load_run, renderable, show
    from replay.viewer.tables import header

    run_controls = controls.for_train(args)
    options = _options(args)
    seconds = None if args.timeout is None else parse_duration(args.timeout)

    def hint() -> None:  # only once train accepted its input: a refused run has no page
        console.print(serve_hint(args.out), highlight=False, soft_wrap=True, markup=False)

    with WATCHDOG.armed(seconds, args.timeout or ""):
        code = runner.train(options, args.out, console, concurrency=args.concurrency,
                            test_split="test" if args.test_eval else None,
                            hooks=run_controls.hooks, on_ready=hint)
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
    from replay.plan.estimate import make_plan, render_plan, show_config
    from replay.run.options import build_config

    options = _options(args)
    if args.show_config:
        console.out(json.dumps(show_config(options), indent=2), highlight=False)
        return 0
    if not (args.target and args.optimizer):
        missing = " and ".join(f for f in ("--target", "--optimizer") if not getattr(args, f[2:]))
        raise StraTuneError(f"plan: {missing} required (only --show-config goes without)")
    from replay.models import specs as models
    from stratune_core.round.registry import entry_of  # the registry imports numpy

    task = models.load_task(options.task, data_dir=options.data_dir)
    config = build_config(options, task)
    if entry_of(options.method).baseline:
        from replay.plan.method_plan import render_method_plan

        console.print(render_method_plan(options.method, config, task))
        return 0
    console.print(render_plan(make_plan(config, task), config))
    if options.method.generator is not None:
        console.print(f"generator: {options.method.generator} writes each round's candidate "
                      "(Table 4 hybrid); its calls replace strategy selection and generation")
    return 0


def cmd_evaluate(args: argparse.Namespace, console: Console) -> int:
    from replay.evaluate import command as evaluate_command

    if args.out is not None and args.cache_dir is not None:
        # OUT's own cache is the one its replay re-checks: another one would go unread
        raise StraTuneError(f"--cache-dir {args.cache_dir}: an evaluation with --out keeps its "
                            "answers in OUT/cache; give --out or --cache-dir, not both")
    cache_dir = args.cache_dir or cache_cli.DEFAULT_CACHE_DIR
    return evaluate_command.run(args, _task_spec(args), cache_dir, console)


def cmd_cache(args: argparse.Namespace) -> int:
    from replay.rundir.cache_owner import owner_locked

    if args.cache_command != "prune" or args.dry_run:
        return cache_cli.run(args)
    with owner_locked(args.cache_dir, "cache prune"):
        return cache_cli.run(args)


def cmd_replay(args: argparse.Namespace, console: Console) -> int:
    from replay.run import runner

    return runner.replay(args.dir, console)


def cmd_view(args: argparse.Namespace, console: Console) -> int:
    if args.html is not None:
        from replay.dashboard.html_file import write_html

        given = [flag for flag, value in (("--round", args.round_number),
                                          ("--candidate", args.candidate),
                                          ("--episode", args.episode),
                                          ("--export", args.export)) if value is not None]
        if given:
            raise StraTuneError(f"--html and {given[0]}: the page holds every round and "
                                "candidate; give one of them")
        console.print(f"written: {escape(str(write_html(args.dir, args.html)))}")
        return 0
    from replay.viewer.show import load_run, renderable, show

    run = load_run(args.dir)
    picture = renderable(run, round_number=args.round_number, candidate=args.candidate,
                         episode=args.episode)
    written = show(picture, console, export=args.export, output=args.output, width=args.width)
    if written is not None:
        console.print(f"written: {escape(str(written))}")
    return 0


def cmd_serve(args: argparse.Namespace, console: Console) -> int:
    from replay.dashboard.server import DEFAULT_HOST, serve

    def say(line: str) -> None:
        console.print(escape(line), soft_wrap=True, highlight=False)

    return serve(Path(args.dir), args.host or DEFAULT_HOST, args.port, say,
                 explicit_host=args.host is not None)


def serve_hint(out: str | Path) -> str:
    """The line `train` and `grid` print first: how to watch the run in a browser."""
    return f"live page: stratune serve {shlex.quote(str(out))}"


def cmd_optimize_prompts(args: argparse.Namespace, console: Console) -> int:
    try:
        from replay.bridges import mlflow_command
    except ImportError:
        raise StraTuneError("optimize-prompts needs MLflow >= 3.18: pip install "
                            "'stratune[mlflow]'") from None
    return mlflow_command.run(args, console)


def cmd_export_inspect(args: argparse.Namespace, console: Console) -> int:
    try:
        from replay.bridges.inspect_export import export
    except ImportError:
        raise StraTuneError("export-inspect needs inspect_ai: pip install 'stratune[inspect]'") \
            from None
    path, name = export(args.dir, args.output)
    console.print(f"written: {escape(str(path))}; run it with: inspect eval "
                  f"{escape(str(path))}@{name} --model ...", soft_wrap=True)
    return 0


def cmd_demo(args: argparse.Namespace, console: Console) -> int:
    from replay.commands.demo import demo, demo_live

    if args.live:
        return demo_live(console, args.out)
    return demo(console, args.trace)
