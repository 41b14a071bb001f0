"""`stratune compare DIR... [--by FIELD] [--format rich|markdown|csv|latex|json] [--table NAME]`."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console


def register(sub: Any) -> None:
    from replay.compare.names import FORMATS, NAMES

    p = sub.add_parser("compare", help="the paper's tables from run directories",
                       description="Reads run directories (grid cells or loose runs, found "
                                   "recursively) and prints the paper's tables.")
    p.add_argument("dirs", nargs="+", metavar="DIR")
    p.add_argument("--by", action="append", default=[], metavar="FIELD",
                   help="group rows by manifest fields instead of the method: config.selector, "
                        "profile, seed, target, task.spec, grid.ablation… (repeatable)")
    p.add_argument("--format", default="rich", choices=FORMATS)
    p.add_argument("--table", action="append", choices=NAMES, metavar="NAME",
                   help=f"only these tables ({', '.join(NAMES)}; repeatable)")
    p.add_argument("--output", help="write to this file instead of the terminal")
    p.set_defaults(func=cmd_compare)


def cmd_compare(args: argparse.Namespace, console: Console) -> int:
    from pathlib import Path

    from replay.compare.render import render_text, rich_table
    from replay.compare.runs import checks, load_runs
    from replay.compare.tables import NAMES, build
    from replay.rundir.output_path import check_output

    if args.output is not None:
        check_output(args.output)
    runs = load_runs(args.dirs)
    tables = build(runs, args.table or NAMES, args.by)
    if args.format == "rich" and args.output is None:
        console.print(f"{len(runs)} runs ({sum(r.finished for r in runs)} finished; "
                      f"{checks(runs)})")
        for table in tables:
            console.print(rich_table(table))
        return 0
    if args.format == "rich":
        recorder = Console(record=True, width=160, file=open(args.output, "w"))  # noqa: SIM115
        for table in tables:
            recorder.print(rich_table(table))
        recorder.file.close()
        return 0
    text = render_text(tables, args.format)
    if args.output is not None:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        print(text, end="")
    return 0
