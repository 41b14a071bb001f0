"""`stratune evaluate`'s own flags, apart from the command (`replay.evaluate.command`) so that
building the parser imports no scorer or backend."""

from __future__ import annotations

import argparse

from replay.commands.arg_types import directory, part_kinds

SKILL_PARTS_HELP = ("with an Agent Skills folder: what it learns (or scores) beside the body, "
                    "comma-separated: description, references (its Markdown files), scripts "
                    "(its scripts/ files, which the optimizer may edit and add)")
INITIAL = "initial"  # --baseline initial: the task's own initial skill


def add_flags(ev: argparse.ArgumentParser) -> None:
    ev.add_argument("--baseline", metavar="initial|FILE",
                    help="also score this skill (`initial`: the task's initial skill) and show "
                         "each skill's paired gain, wins and losses against it")
    ev.add_argument("--out", metavar="DIR", type=directory,
                    help="keep the scores, the skill texts and the cache in DIR (it then holds "
                         "the cache); `stratune replay DIR` re-checks them offline")
    ev.add_argument("--skill-parts", type=part_kinds, default=(), metavar="KINDS",
                    help=SKILL_PARTS_HELP)
