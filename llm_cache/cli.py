"""`stratune cache stats | explain KEY | prune`: the flags (`register`) and the dispatch to the
commands' bodies in `llm_cache.cache_commands`. `--cache-dir` goes before or after the
subcommand.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import TextIO

DEFAULT_CACHE_DIR = ".stratune/cache"


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    cache = subparsers.add_parser("cache", help="inspect and prune the model-response cache")
    _cache_dir(cache, DEFAULT_CACHE_DIR)
    sub = cache.add_subparsers(dest="cache_command", required=True)
    _cache_dir(sub.add_parser("stats", help="entries, size, tokens and recorded cost per model"))
    explain = sub.add_parser("explain", help="show what went into a key and what is stored")
    _cache_dir(explain)
    explain.add_argument("key", help="32-hex cache key")
    prune = sub.add_parser("prune", help="delete selected entries")
    _cache_dir(prune)
    prune.add_argument("--corrupt", action="store_true", help="entries failing verification")
    prune.add_argument("--model", help="entries for this canonical model id")
    prune.add_argument("--older-than-days", type=_days, help="entries recorded before this")
    prune.add_argument("--dry-run", action="store_true", help="only count what would go")
    cache.set_defaults(func=run)


def _cache_dir(parser: argparse.ArgumentParser, default: str | None = None) -> None:
    # On the subcommands the default is SUPPRESS, so a value given before the subcommand is
    # not overwritten by the subparser's default.
    parser.add_argument("--cache-dir", default=default if default else argparse.SUPPRESS,
                        help=f"cache directory (default: {DEFAULT_CACHE_DIR}), a run's "
                             "RUN/cache for example")


def _days(text: str) -> float:
    try:
        days = float(text)
    except ValueError:
        days = float("nan")
    if not math.isfinite(days) or days < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of days >= 0")
    return days


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from llm_cache.cache_commands import explain, prune, stats

    out = out or sys.stdout
    commands = {"stats": stats, "explain": explain, "prune": prune}
    return commands[args.cache_command](args, out)
