"""Each subcommand's `--help` ends with two or three examples that fit 80 columns, and every
example is a command the parser accepts as written."""

from __future__ import annotations

import shlex

import pytest

from replay.commands.app import build_parser
from replay.commands.help_examples import EXAMPLES
from tests.support.cli import main


def _commands(command: str) -> list[list[str]]:
    out = []
    for example in EXAMPLES[command]:
        lines = [line for line in example.splitlines() if not line.lstrip().startswith("#")]
        words = shlex.split(" ".join(line.rstrip(" \\") for line in lines), comments=True)
        assert words[0] == "stratune", example
        out.append(words[1:])
    return out


def _subcommands() -> list[str]:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return sorted(action.choices)


@pytest.mark.parametrize("command", _subcommands())
def test_help_ends_with_examples(command: str, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert main([command, "--help"]) == 0
    text = capsys.readouterr().out
    tail = text[text.rindex("examples:\n"):]
    assert 2 <= sum(line.startswith("  stratune ") for line in tail.splitlines()) <= 3
    assert all(len(line) <= 80 for line in tail.splitlines()), tail


@pytest.mark.parametrize("command", sorted(EXAMPLES))
def test_every_example_parses(command: str) -> None:
    for argv in _commands(command):
        args = build_parser().parse_args(argv)
        assert args.command == command
