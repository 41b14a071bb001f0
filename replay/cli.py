"""The `stratune` command. Subcommands register themselves; this file only wires them."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from llm_cache import cli as cache_cli


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="stratune", description="StraTune command line")
    subparsers = parser.add_subparsers(dest="command", required=True)
    cache_cli.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
