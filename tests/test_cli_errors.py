"""Bad input to the `stratune` command: exit code 2, one line on stderr that names the file,
line, field or flag, no traceback, nothing written.

The named cases below are the ones users hit (tests/test_cli_generated_input.py drives the
command with generated malformed arguments and files). The toy world is plugged in as the
tests' entry module does it (`tests.support.cli.main`).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.refusals import (
    ROW,
    TEST_ROW,
    TRAIN,
    cwd,
    json_line,
    refused,
    run,
    scorer_module,
    task_file,
    write,
)

__all__ = ["run"]  # the module-scoped fixture the cases read


Case = Callable[[Path, Path], tuple[list[str], tuple[str, ...]]]


def _damaged_blob(tmp: Path, run: Path) -> tuple[list[str], tuple[str, ...]]:
    copy = tmp / "copy"
    shutil.copytree(run, copy)
    blob = sorted((copy / "blobs").iterdir())[-1]
    data = bytearray(blob.read_bytes())
    data[len(data) // 2] ^= 0xFF
    blob.write_bytes(bytes(data))
    return ["view", str(copy), "--candidate", blob.name[:6]], (blob.name, "damaged")


def _damaged_db(tmp: Path, run: Path) -> Path:
    cache = tmp / "cache"
    shutil.copytree(run / "cache", cache)
    data = bytearray((cache / "cache.db").read_bytes())
    data[:16] = b"this is no db..."
    (cache / "cache.db").write_bytes(bytes(data))
    return cache


CASES: dict[str, Case] = {
    "task file not UTF-8": lambda tmp, run: (
        [*TRAIN[:2], task_file(tmp, [json_line(ROW), b'{"id": "q2", "input": "caf\xe9"}']),
         *TRAIN[3:], "--out", str(tmp / "o")], ("task.jsonl:2", "not UTF-8", "byte 0xe9")),
    "blank input": lambda tmp, run: (
        ["plan", "--task", task_file(tmp, [json_line({**ROW, "input": "  \t"}), json_line(TEST_ROW)]),
         *TRAIN[3:]], ("task.jsonl:1", "'input'", "empty")),
    "empty expected": lambda tmp, run: (
        ["plan", "--task", task_file(tmp, [json_line(ROW), json_line({**TEST_ROW, "expected": ""})]),
         *TRAIN[3:]], ("task.jsonl:2", "'expected'", "empty")),
    "budget nanx": lambda tmp, run: ([*TRAIN, "--budget", "nanx", "--out", str(tmp / "o")],
                                     ("--budget", "nanx")),
    "budget infx": lambda tmp, run: ([*TRAIN, "--budget", "infx", "--out", str(tmp / "o")],
                                     ("--budget", "infx")),
    "budget -3": lambda tmp, run: ([*TRAIN, "--budget=-3", "--out", str(tmp / "o")], ("--budget",)),
    "concurrency 0": lambda tmp, run: ([*TRAIN, "--concurrency", "0", "--out", str(tmp / "o")],
                                       ("--concurrency", "at least 1")),
    "limit 0": lambda tmp, run: ([*TRAIN, "--limit", "0", "--out", str(tmp / "o")], ("--limit",)),
    "seed not a number": lambda tmp, run: ([*TRAIN, "--seed", "x1", "--out", str(tmp / "o")],
                                           ("--seed",)),
    "out is a file": lambda tmp, run: ([*TRAIN, "--out", str(run / "manifest.json")],
                                       ("--out", "is a file")),
    "skill is binary": lambda tmp, run: (
        ["evaluate", "--skill", str(next((run / "blobs").iterdir())), "--task", "toy",
         "--target", "scripted:toy-target"], ("--skill", "not UTF-8")),
    "skill is a directory": lambda tmp, run: (
        ["evaluate", "--skill", str(run), "--task", "toy", "--target", "scripted:toy-target"],
        ("--skill", "is a directory")),
    "scorer raises": lambda tmp, run: (
        ["plan", "--task", task_file(tmp, [json_line(ROW), json_line(TEST_ROW)]), "--scorer",
         scorer_module(tmp, "raise ValueError('bad gold')"), *TRAIN[3:]],
        (":score", "ValueError", "sample q1")),
    "scorer returns None": lambda tmp, run: (
        ["plan", "--task", task_file(tmp, [json_line(ROW), json_line(TEST_ROW)]), "--scorer",
         scorer_module(tmp, "return None"), *TRAIN[3:]], (":score", "None", "sample q1")),
    "cache.db header damaged: train": lambda tmp, run: (
        [*TRAIN, "--out", str(_damaged_db(tmp, run).parent)], ("cache.db", "damaged")),
    "cache.db header damaged: stats": lambda tmp, run: (
        ["cache", "stats", "--cache-dir", str(_damaged_db(tmp, run))], ("cache.db",)),
    "cache.db header damaged: prune": lambda tmp, run: (
        ["cache", "--cache-dir", str(_damaged_db(tmp, run)), "prune", "--corrupt"],
        ("cache.db",)),
    "view a damaged blob": _damaged_blob,
    "cache dir typo": lambda tmp, run: (["cache", "--cache-dir", str(tmp / "typo"), "stats"],
                                        ("typo", "check --cache-dir")),
    "config NaN": lambda tmp, run: (
        [*TRAIN, "--config", str(write(tmp / "c.json", '{"z": NaN}')), "--out", str(tmp / "o")],
        ("c.json", "NaN")),
    "config Infinity": lambda tmp, run: (
        [*TRAIN, "--config", str(write(tmp / "c.json", '{"delta": -Infinity}')), "--out",
         str(tmp / "o")], ("c.json", "Infinity")),
    "config not UTF-8": lambda tmp, run: (
        [*TRAIN, "--config", str(write(tmp / "c.json", b'{"seed": "\xff"}')), "--out",
         str(tmp / "o")], ("c.json",)),
    "config is a directory": lambda tmp, run: (
        [*TRAIN, "--config", str(tmp), "--out", str(tmp / "o")], ("--config",)),
    "unknown task file": lambda tmp, run: (
        ["plan", "--task", str(tmp / "nope.jsonl"), *TRAIN[3:]], ("nope.jsonl",)),
    "bad model spec": lambda tmp, run: (
        ["plan", "--task", "toy", "--target", "openai:m?api_key=sk-SECRET-0001",
         "--optimizer", "scripted:toy-optimizer"], ("openai:m",)),
    "replay a file": lambda tmp, run: (["replay", str(run / "usage.json")], ("manifest.json",)),
    "view no run": lambda tmp, run: (["view", str(tmp)], ("manifest.json",)),
    "view round 0": lambda tmp, run: (["view", str(run), "--round", "0"], ("--round 0",)),
    "unknown subcommand flag": lambda tmp, run: (["view", str(run), "--colour"],
                                                 ("--colour",)),
    # model spec options (a zero concurrency never sends a call; a timeout <= 0 fails them all)
    "target ?concurrency=0": lambda tmp, run: (
        ["plan", "--task", "toy", "--target", "anthropic:claude-haiku-4-5?concurrency=0",
         "--optimizer", "scripted:toy-optimizer"], ("concurrency=", ">= 1")),
    "optimizer ?concurrency=0": lambda tmp, run: (
        ["plan", *TRAIN[1:5], "--optimizer", "anthropic:claude-sonnet-4-6?concurrency=0"],
        ("claude-sonnet-4-6", "concurrency=")),
    "evaluate ?concurrency=0": lambda tmp, run: (  # a closed local port: never the network
        ["evaluate", "--skill", str(run / "final_skill.txt"), "--task", "toy", "--target",
         "openai:m@http://127.0.0.1:9/v1?concurrency=0&max_retries=0", "--out", str(tmp / "o")],
        ("concurrency=",)),
    "?timeout=0": lambda tmp, run: (
        ["plan", "--task", "toy", "--target", "anthropic:claude-haiku-4-5?timeout=0",
         "--optimizer", "scripted:toy-optimizer"], ("timeout=", "above 0")),
    "?timeout=-1": lambda tmp, run: (
        ["plan", "--task", "toy", "--target", "scripted:toy-target", "--optimizer",
         "anthropic:claude-sonnet-4-6?timeout=-1"], ("timeout=",)),
    "?connect_timeout=nan": lambda tmp, run: (
        ["plan", "--task", "toy", "--target", "anthropic:claude-haiku-4-5?connect_timeout=nan",
         "--optimizer", "scripted:toy-optimizer"], ("connect_timeout=",)),
    "?max_retries=-1 with a key": lambda tmp, run: (
        ["plan", "--task", "toy", "--target",
         "anthropic:claude-haiku-4-5?max_retries=-1&api_key=sk-SECRET-0001", "--optimizer",
         "scripted:toy-optimizer"], ("max_retries=",)),
    # grid files and flags
    "grid file binary": lambda tmp, run: (
        ["grid", str(write(tmp / "g.toml", bytes(range(256)) * 4)), "--out", str(tmp / "o")],
        ("g.toml", "not UTF-8")),
    "grid file is a directory": lambda tmp, run: (["grid", str(tmp), "--out", str(tmp / "o")],
                                                  ("directory",)),
    "grid --jobs -1": lambda tmp, run: (
        ["grid", str(_grid(tmp)), "--out", str(tmp / "o"), "--jobs", "-1"], ("--jobs",)),
    "grid --jobs 0": lambda tmp, run: (
        ["grid", str(_grid(tmp)), "--out", str(tmp / "o"), "--jobs", "0"], ("--jobs",)),
    "grid task path missing": lambda tmp, run: (
        ["grid", str(_grid(tmp, task="data/missing", scorer="exact")), "--out", str(tmp / "o")],
        ("tasks.t.task", "data/missing", "not found")),
    "grid --mlflow bogus": lambda tmp, run: (
        ["grid", str(_grid(tmp)), "--out", str(tmp / "o"), "--mlflow", "bogus://x"],
        ("--mlflow", "bogus://x")),
    # stop controls, tracking and --out
    "--mlflow bogus": lambda tmp, run: ([*TRAIN, "--mlflow", "bogus://x", "--out",
                                         str(tmp / "o")], ("--mlflow", "bogus://x")),
    "--max-cost nan": lambda tmp, run: ([*TRAIN, "--max-cost", "nan", "--out", str(tmp / "o")],
                                        ("--max-cost", "nan")),
    "--max-cost inf": lambda tmp, run: ([*TRAIN, "--max-cost", "inf", "--out", str(tmp / "o")],
                                        ("--max-cost",)),
    "--timeout nan": lambda tmp, run: ([*TRAIN, "--timeout", "nan", "--out", str(tmp / "o")],
                                       ("--timeout",)),
    "--out empty": lambda tmp, run: ([*TRAIN, "--out", ""], ("--out", "empty")),
    "--out blank": lambda tmp, run: ([*TRAIN, "--out", "  "], ("--out",)),
    "evaluate --out empty": lambda tmp, run: (
        ["evaluate", "--skill", str(run / "final_skill.txt"), "--task", "toy", "--target",
         "scripted:toy-target", "--out", ""], ("--out",)),
    "grid --out empty": lambda tmp, run: (["grid", str(_grid(tmp)), "--out", ""], ("--out",)),
    # sizes no run can use
    "budget 1e23x": lambda tmp, run: (
        [*TRAIN, "--budget", "99999999999999999999999x", "--out", str(tmp / "o")],
        ("budget", "more than any run")),
    "budget 1e308x": lambda tmp, run: ([*TRAIN, "--budget", "1e308x", "--out", str(tmp / "o")],
                                       ("budget",)),
    "budget 10^23": lambda tmp, run: (
        [*TRAIN, "--budget", "100000000000000000000000", "--out", str(tmp / "o")], ("budget",)),
    "config n_batches 10^23": lambda tmp, run: (
        [*TRAIN, "--config", str(write(tmp / "c.json", '{"n_batches": 100000000000000000000000}')),
         "--out", str(tmp / "o")], ("n_batches", "c.json", "training samples")),
    "config key twice": lambda tmp, run: (
        [*TRAIN, "--config", str(write(tmp / "c.json", '{"seed": 1, "z": 1.0, "seed": 2}')),
         "--out", str(tmp / "o")], ("c.json", "'seed'", "twice")),
    "config key twice, nested": lambda tmp, run: (
        [*TRAIN, "--config", str(write(tmp / "c.json", '{"selector": {"a": 1, "a": 2}}')),
         "--out", str(tmp / "o")], ("c.json", "twice")),
    # models that cannot be built, and errors that named the wrong thing
    "local model without the extra": lambda tmp, run: (
        [*TRAIN[:3], "--target", "llamacpp:/nonexistent/m.gguf", *TRAIN[5:], "--out",
         str(tmp / "o")], ("llamacpp:/nonexistent/m.gguf",)),
    "--selector replay:/nonexistent": lambda tmp, run: (
        [*TRAIN, "--selector", f"replay:{tmp / 'nonexistent'}", "--out", str(tmp / "o")],
        ("nonexistent", "holds no recorded run")),
    "evaluate --cache-dir FILE": lambda tmp, run: (
        ["evaluate", "--skill", str(run / "final_skill.txt"), "--task", "toy", "--target",
         "scripted:toy-target", "--cache-dir", str(write(tmp / "f", "x"))],
        ("--cache-dir", "is a file")),
    "task path missing, with a scorer": lambda tmp, run: (
        ["plan", "--task", str(tmp / "data" / "mytask"), "--scorer", "exact", *TRAIN[3:]],
        ("mytask", "not found")),
    # one directory, one writer: a run and a grid never share one
    "grid on a run directory": lambda tmp, run: (
        ["grid", str(_grid(tmp)), "--out", str(_copy(run, tmp / "o"))],
        ("holds a training run",)),
    "train on a grid directory": lambda tmp, run: (
        [*TRAIN, "--out", str(_grid_dir(tmp / "o"))], ("grid directory",)),
    # options a method does not take, wherever they come from (issue 38, item 9)
    "--method textgrad, --config selector": lambda tmp, run: (
        [*TRAIN, "--method", "textgrad", "--config",
         str(write(tmp / "c.json", '{"selector": "fixed:I1"}')), "--out", str(tmp / "o")],
        ("c.json", "selector", "--method textgrad")),
    "--method iter-cot, --config max_rounds": lambda tmp, run: (
        [*TRAIN, "--method", "iter-cot", "--config",
         str(write(tmp / "c.json", '{"max_rounds": 3}')), "--out", str(tmp / "o")],
        ("c.json", "max_rounds", "--method iter-cot")),
    "--generator skillopt, --config operator": lambda tmp, run: (
        [*TRAIN, "--generator", "skillopt", "--config",
         str(write(tmp / "c.json", '{"operator": "I1+F1"}')), "--out", str(tmp / "o")],
        ("c.json", "operator", "--generator skillopt")),
    "--method gepa --budget 1": lambda tmp, run: (
        [*TRAIN, "--method", "gepa", "--budget", "1", "--out", str(tmp / "o")],
        ("budget", "--method gepa", "at least")),
    "--method textgrad --budget 1": lambda tmp, run: (
        [*TRAIN, "--method", "textgrad", "--budget", "1", "--out", str(tmp / "o")],
        ("budget", "--method textgrad")),
    "--method trace2skill --budget 1": lambda tmp, run: (
        [*TRAIN, "--method", "trace2skill", "--budget", "1", "--out", str(tmp / "o")],
        ("budget", "--method trace2skill")),
    "--method skillopt --budget 2": lambda tmp, run: (
        [*TRAIN, "--method", "skillopt", "--budget", "2", "--out", str(tmp / "o")],
        ("budget", "--method skillopt")),
    "grid iter-cot ablation with max_rounds": lambda tmp, run: (
        ["grid", str(_grid(tmp, ablation="{ method = 'iter-cot', max_rounds = 3 }")), "--out",
         str(tmp / "o")], ("ablations.a.max_rounds", "iter-cot")),
    "grid textgrad ablation with a config file": lambda tmp, run: (
        ["grid", str(_grid(tmp, ablation="{ method = 'textgrad', config = 'c.json' }",
                           config='{"selector": "fixed:I1"}')), "--out", str(tmp / "o")],
        ("ablations.a", "c.json", "selector")),
    # values checked against what the backend and the run can take (item 10)
    "config i3_k 10^9": lambda tmp, run: (
        [*TRAIN, "--config", str(write(tmp / "c.json", '{"i3_k": 1000000000}')), "--out",
         str(tmp / "o")], ("i3_k", "c.json")),
    "config optimizer_max_tokens 10^15": lambda tmp, run: (
        [*TRAIN, "--config", str(write(tmp / "c.json",
                                       '{"optimizer_max_tokens": 1000000000000000}')),
         "--out", str(tmp / "o")], ("optimizer_max_tokens",)),
    "model spec with a leading space": lambda tmp, run: (
        [*TRAIN[:3], "--target", " scripted-not:x", *TRAIN[5:], "--out", str(tmp / "o")],
        ("spaces",)),
    "model name with a leading space": lambda tmp, run: (
        ["plan", "--task", "toy", "--target", "anthropic: claude-haiku-4-5", "--optimizer",
         "scripted:toy-optimizer"], ("model name", "space")),
    "?api_key= empty": lambda tmp, run: (
        [*TRAIN[:3], "--target", "openai:m@http://127.0.0.1:9/v1?api_key=", *TRAIN[5:],
         "--out", str(tmp / "o")], ("api_key=", "empty")),
    "?temperature=nan": lambda tmp, run: (
        [*TRAIN[:3], "--target", "openai:m@http://127.0.0.1:9/v1?temperature=nan", *TRAIN[5:],
         "--out", str(tmp / "o")], ("temperature=",)),
    "?temperature=inf": lambda tmp, run: (
        ["plan", "--task", "toy", "--target", "openai:m@http://127.0.0.1:9/v1?temperature=inf",
         "--optimizer", "scripted:toy-optimizer"], ("temperature=",)),
    "?n_ctx=1": lambda tmp, run: (
        [*TRAIN[:3], "--target", "openai:m@http://127.0.0.1:9/v1?n_ctx=1", *TRAIN[5:],
         "--out", str(tmp / "o")], ("n_ctx=", ">= 64")),
    "?concurrency=10^9": lambda tmp, run: (
        ["plan", "--task", "toy", "--target", "anthropic:claude-haiku-4-5?concurrency=1000000000",
         "--optimizer", "scripted:toy-optimizer"], ("concurrency=", "at most", "4096")),
    "an option no backend takes": lambda tmp, run: (
        ["plan", "--task", "toy", "--target", "anthropic:claude-haiku-4-5?colour=blue",
         "--optimizer", "scripted:toy-optimizer"], ("colour", "max_retries")),
    "an openai option on a Claude model": lambda tmp, run: (
        ["plan", "--task", "toy", "--target", "anthropic:claude-haiku-4-5?n_ctx=4096",
         "--optimizer", "scripted:toy-optimizer"], ("n_ctx",)),
    "unreachable base URL": lambda tmp, run: (  # a closed local port: never the network
        [*TRAIN[:3], "--target", "openai:m@http://127.0.0.1:9/v1", *TRAIN[5:], "--out",
         str(tmp / "o")], ("cannot connect", "127.0.0.1:9")),
    "unreachable base URL, evaluate": lambda tmp, run: (
        ["evaluate", "--skill", str(run / "final_skill.txt"), "--task", "toy", "--target",
         "openai:m@http://127.0.0.1:9/v1", "--out", str(tmp / "o")], ("cannot connect",)),
    "malformed base URL": lambda tmp, run: (
        [*TRAIN[:3], "--target", "openai:m@http://[::1/v1", *TRAIN[5:], "--out",
         str(tmp / "o")], ("base URL", "malformed")),
    "base URL without a host": lambda tmp, run: (
        [*TRAIN[:3], "--target", "openai:m@http://", *TRAIN[5:], "--out", str(tmp / "o")],
        ("base URL", "host")),
    # files (item 11)
    "initial_skill.txt of white space": lambda tmp, run: (
        ["plan", "--task", str(_task_folder(tmp, skill=" \n\t\n")), "--scorer", "exact",
         *TRAIN[3:]], ("initial_skill.txt:1", "empty")),
    "an id that is a boolean": lambda tmp, run: (
        ["plan", "--task", task_file(tmp, [json_line({**ROW, "id": True}), json_line(TEST_ROW)]),
         *TRAIN[3:]], ("task.jsonl:1", "'id'", "bool")),
    "an unknown task field": lambda tmp, run: (
        ["plan", "--task", task_file(tmp, [json_line(ROW), json_line({**TEST_ROW, "expcted": 1})]),
         *TRAIN[3:]], ("task.jsonl:2", "'expcted'", "unknown")),
    "a duplicate SKILL.md key": lambda tmp, run: (
        ["evaluate", "--skill", str(_skill(tmp, "sk", "name: sk\ndescription: a\n"
                                                "description: b\n")), "--task", "toy",
         "--target", "scripted:toy-target", "--out", str(tmp / "o")],
        ("SKILL.md:4", "'description'", "twice")),
    "a non-ASCII skill name": lambda tmp, run: (
        ["evaluate", "--skill", str(_skill(tmp, "sk\u00e9", "name: sk\u00e9\ndescription: a\n")),
         "--task", "toy", "--target", "scripted:toy-target", "--out", str(tmp / "o")],
        ("SKILL.md:2", "'name'", "ASCII")),
    "deeply nested config JSON": lambda tmp, run: (
        [*TRAIN, "--config", str(write(tmp / "c.json", "[" * 100_000 + "]" * 100_000)),
         "--out", str(tmp / "o")], ("c.json", "nested too deeply")),
    "deeply nested grid TOML": lambda tmp, run: (
        ["grid", str(write(tmp / "g.toml", "a = " + "[" * 100_000 + "]" * 100_000)),
         "--out", str(tmp / "o")], ("g.toml", "nested too deeply")),
    "deeply nested task line": lambda tmp, run: (
        ["plan", "--task", task_file(tmp, [b'{"id": "a", "input": ' + b"[" * 100_000
                                           + b"]" * 100_000 + b"}"]), *TRAIN[3:]],
        ("task.jsonl:1", "nested too deeply")),
    "deeply nested SKILL.md front matter": lambda tmp, run: (
        ["evaluate", "--skill", str(_skill(tmp, "sk", "name: sk\ndescription: a\nx: "
                                                + "[" * 100_000 + "]" * 100_000 + "\n")),
         "--task", "toy", "--target", "scripted:toy-target", "--out", str(tmp / "o")],
        ("SKILL.md", "nested too deeply")),
    "--width 10^8": lambda tmp, run: (
        ["view", str(run), "--export", "txt", "--output", str(tmp / "v.txt"), "--width",
         "100000000"], ("--width", "at most")),
    "grid seeds 10^9": lambda tmp, run: (
        ["grid", str(_grid(tmp, seeds="1000000000")), "--out", str(tmp / "o")],
        ("seeds", "at most")),
    "grid seeds beyond 2^63": lambda tmp, run: (
        ["grid", str(_grid(tmp, seeds="[0, 99999999999999999999]")), "--out", str(tmp / "o")],
        ("seeds",)),
}


def _task_folder(tmp: Path, *, skill: str) -> Path:
    folder = tmp / "mytask"
    folder.mkdir()
    write(folder / "train.jsonl", json.dumps(ROW) + "\n")
    write(folder / "test.jsonl", json.dumps(TEST_ROW) + "\n")
    write(folder / "initial_skill.txt", skill)
    return folder


def _skill(tmp: Path, name: str, front: str) -> Path:
    folder = tmp / name
    folder.mkdir()
    write(folder / "SKILL.md", f"---\n{front}---\nAnswer with the word.\n")
    return folder


def _grid(tmp: Path, *, task: str = "toy", scorer: str | None = None, ablation: str = "{}",
          config: str | None = None, seeds: str = "1") -> Path:
    if config is not None:
        write(tmp / "c.json", config)
    scored = f"scorer = '{scorer}'\n" if scorer else ""
    return write(tmp / "grid.toml", f"seeds = {seeds}\n[tasks.t]\ntask = '{task}'\n{scored}"
                  "[pairs.p]\ntarget = 'scripted:toy-target'\n"
                  f"optimizer = 'scripted:toy-optimizer'\n[ablations]\na = {ablation}\n")


def _copy(run: Path, to: Path) -> Path:
    shutil.copytree(run, to)
    return to


def _grid_dir(path: Path) -> Path:
    path.mkdir()
    write(path / "grid.toml", "seeds = 1\n")
    return path


# Cases refused about the directory they were given, which exists beforehand (and may get its
# lock file).
KEEPS_OUT = ("grid on a run directory", "train on a grid directory",
             "cache.db header damaged: train")


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_is_one_line_and_exit_2(run, tmp_path, capsys, name):
    argv, names = CASES[name](tmp_path, run)
    before = sorted(p.name for p in tmp_path.iterdir())
    with cwd(tmp_path):
        said = refused(capsys, argv, *names, hinted=name == "cache.db header damaged: train")
    assert "sk-SECRET-0001" not in said
    if name in KEEPS_OUT:
        return
    assert not (tmp_path / "o").exists()  # refused before the run directory was made
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nor anything else


def test_bad_input_count():
    """The closing note's figure: named bad inputs tried through the command (each is refused
    in one line with exit 2 by the test above)."""
    assert len(CASES) >= 98
    print(f"named bad inputs tried: {len(CASES)}")
