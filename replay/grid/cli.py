"""`stratune grid GRID.toml --out DIR`: every cell of a grid file, on this machine or on Ray."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from replay.commands.arg_types import at_least, directory, name
from stratune_core.records.errors import ConfigError


def register(sub: Any) -> None:
    p = sub.add_parser("grid", help="run a grid of tasks x model pairs x ablations x seeds",
                       description="Each cell is an ordinary run directory DIR/<task>/<pair>/"
                                   "<ablation>/seed<k>; rerunning skips complete cells and "
                                   "resumes the others from their caches.")
    p.add_argument("grid", help="grid file (TOML)")
    p.add_argument("--out", required=True, type=directory, help="grid directory")
    p.add_argument("--jobs", type=at_least(1), help="cells at once (default: all of them; 1 when a "
                                           "model runs in process)")
    p.add_argument("--max-connections", action="append", default=[], metavar="ENDPOINT=N",
                   help="one limit per model endpoint shared by all cells, e.g. anthropic=64, "
                        "openai:http://gpu:8000/v1=16 (repeatable; overrides the grid file)")
    p.add_argument("--max-cost", metavar="USD", help="stop every cell before the grid's paid "
                   "cost (all cells, all sittings) would pass USD")
    p.add_argument("--timeout", metavar="DURATION", help="stop after DURATION (90s, 30m, 2h); "
                   "`touch DIR/STOP` stops every cell at its next round boundary")
    p.add_argument("--mlflow", metavar="URI", help="log every cell to MLflow")
    p.add_argument("--mlflow-experiment", default="stratune", type=name, metavar="NAME")
    ray = p.add_argument_group("Ray (pip install -e '.[ray]')")
    ray.add_argument("--ray", metavar="ADDRESS", help="run each cell as a Ray task: `auto` "
                     "(the cluster this node belongs to) or ray://HOST:PORT")
    ray.add_argument("--ray-cpus", type=float, default=1.0, metavar="N",
                     help="CPUs Ray reserves per cell (cells mostly wait; 0.25 packs 4 per CPU)")
    ray.add_argument("--ship", action="store_true", help="DIR is not on a filesystem every "
                     "node sees: copy each cell's directory to its node and back when it ends")
    ray.add_argument("--ray-pass-env", action="store_true", help="hand this shell's provider "
                     "credentials (e.g. ANTHROPIC_API_KEY) to the cells through Ray's "
                     "runtime_env; never written to disk, but Ray's dashboard can show them")
    p.add_argument("--dry-run", action="store_true", help="list the cells and their state")
    p.set_defaults(func=cmd_grid)


def cmd_grid(args: argparse.Namespace, console: Console) -> int:
    from pathlib import Path

    from replay.grid.execute import SpecEnv
    from replay.grid.grid_file import load_grid
    from replay.grid.limits import parse_connections
    from replay.grid.run import GridOptions, checked_cells, plan_lines, run_grid
    from replay.stops.control import parse_cost, parse_duration

    spec = load_grid(args.grid)
    # every flag is read before --dry-run lists the cells: a dry run accepts what a run accepts
    for flag, given in (("--ship", args.ship), ("--ray-pass-env", args.ray_pass_env)):
        if given and args.ray is None:
            raise ConfigError(f"{flag}: only with --ray ADDRESS (a grid on one machine has "
                              "nothing to ship or hand over); add --ray or drop it")
    if args.timeout is not None:
        parse_duration(args.timeout)
    options = GridOptions(
        jobs=args.jobs, max_connections=parse_connections(args.max_connections),
        max_cost=None if args.max_cost is None else parse_cost(args.max_cost),
        timeout=args.timeout, mlflow=args.mlflow, mlflow_experiment=args.mlflow_experiment,
        ray=args.ray, ray_cpus=args.ray_cpus, ship=args.ship, ray_pass_env=args.ray_pass_env,
    )
    if args.dry_run:
        root = Path(args.out).resolve()
        cells = checked_cells(spec, root, SpecEnv())
        for line in plan_lines(cells, root):
            console.print(line, highlight=False)
        return 0
    from replay.commands.handlers import serve_hint

    def hint() -> None:  # only once the grid accepted its input: a refused grid has no page
        console.print(serve_hint(args.out), highlight=False, soft_wrap=True, markup=False)

    return run_grid(spec, args.out, console, options=options, on_ready=hint).code
