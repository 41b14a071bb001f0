"""Issue 52's bad inputs (hardening round 5): each is refused with exit 2 and one line of
stderr naming the flag, file or field, before any model call and before anything is written;
the documented forms the audit found refused are accepted.

Each refusal is checked against both kinds of model the command reaches: the toy world's
scripted models (their calls counted at the backend) and the real `anthropic` client against
the in-process fake Messages API (its request log). The classes and what fixes each:
- files a user points at: a FIFO, socket or non-UTF-8 name in a skill folder
  (`replay/skills/folder_entries.py`); a lone surrogate or a number of 5000 digits in a task
  line, `--config`, SKILL.md front matter or a grid file (`replay/input_files.py`);
- model specs and endpoints: an invisible character or an option given twice
  (`llm_cache/spec.py`), `?base_url=` that is not http(s), ANTHROPIC_BASE_URL with spaces, a
  key holding a newline, a dead proxy (`llm_cache/access.py`), each at once, not after 35 s;
- flags: one duration parser for `--timeout`, `--concurrency` bounded as `?concurrency=`, a
  flag given twice, `--data` for a task that reads none, grid flags read before `--dry-run`;
- the Python API and what runs user code: a scorer's `os._exit`, an initial skill past the
  limit, `stratune.dspy.StraTune` with a spec no run can use.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import stratune
from llm_cache.backends.function import FunctionBackend
from llm_cache.testing.fake_server import FakeAnthropicServer
from replay.models import specs as models
from replay.stops.control import parse_duration
from stratune_core.records.errors import ConfigError
from tests.support.cli import main, toy_extensions
from tests.support.cli import stratune as stratune_cli
from tests.support.refusals import TRAIN, cwd, refused, run, write

__all__ = ["run"]  # the module-scoped fixture (a recorded toy run) the cases read

TOY = ["--target", "scripted:toy-target", "--optimizer", "scripted:toy-optimizer"]
HAIKU = "anthropic:claude-haiku-4-5"
BIG = "9" * 5000  # past Python's 4300 digits of int(str)
ROWS = '{"id": "a", "input": "x", "expected": "1", "split": "train"}\n' \
       '{"id": "b", "input": "y", "expected": "1", "split": "test"}\n'
Env = dict[str, str]
Case = Callable[[Path, Path, str], tuple[list[str], tuple[str, ...], Env]]


def _skill(tmp: Path, extra: str = "", *, entry: Callable[[Path], object] | None = None) -> str:
    folder = tmp / "sk"
    folder.mkdir()
    write(folder / "SKILL.md", f"---\nname: sk\ndescription: a\n{extra}---\nAnswer with the word.\n")
    if entry is not None:
        entry(folder)
    return str(folder)


def _socket(folder: Path) -> None:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(folder / "sock"))
    sock.close()  # the socket file stays


def _bad_name(folder: Path) -> None:
    with open(os.fsencode(folder) + b"/\xff.md", "wb") as handle:
        handle.write(b"notes")


def _task(tmp: Path, rows: str = ROWS) -> str:
    return str(write(tmp / "t.jsonl", rows))


def _grid(tmp: Path, *, top: str = "", ablations: str = "a = {}", task: str = "t",
          pair: str = "p") -> str:
    return str(write(tmp / "g.toml", f"seeds = 1\n{top}[tasks.{task}]\ntask = 'toy'\n"
                     f"[pairs.{pair}]\ntarget = 'scripted:toy-target'\n"
                     f"optimizer = 'scripted:toy-optimizer'\n[ablations]\n{ablations}\n"))


def _train(*extra: str, task: str = "toy", target: str = "scripted:toy-target",
           out: Path) -> list[str]:
    return ["train", "--task", task, "--target", target, "--optimizer",
            "scripted:toy-optimizer", *extra, "--out", str(out)]


def _haiku(tmp: Path, fake: str, **env: str) -> tuple[list[str], Env]:
    return _train(target=HAIKU, out=tmp / "o"), {"ANTHROPIC_API_KEY": "sk-ant-test",
                                                 "ANTHROPIC_BASE_URL": fake, **env}


def _with(argv_env: tuple[list[str], Env], *names: str) -> tuple[list[str], tuple[str, ...], Env]:
    return argv_env[0], names, argv_env[1]


def _surrogate_row(field: str) -> str:
    row = {"id": "a", "input": "x", "expected": "1", "split": "train"}
    text = json.dumps(row).replace(f'"{field}": "', f'"{field}": "\\ud800', 1)
    return text + "\n" + ROWS.splitlines()[1] + "\n"


NO_ENV: Env = {}
CASES: dict[str, Case] = {
    # files in a skill folder: refused when the folder is read, not after the paid run
    "skill folder: a FIFO": lambda tmp, run, fake: (
        _train("--skill", _skill(tmp, entry=lambda f: os.mkfifo(f / "notes.md")), out=tmp / "o"),
        ("notes.md", "FIFO"), NO_ENV),
    "skill folder: a socket": lambda tmp, run, fake: (
        _train("--skill", _skill(tmp, entry=_socket), out=tmp / "o"), ("sock", "socket"), NO_ENV),
    "skill folder: a name not UTF-8": lambda tmp, run, fake: (
        _train("--skill", _skill(tmp, entry=_bad_name), out=tmp / "o"),
        ("\\xff.md", "not UTF-8"), NO_ENV),
    "skill folder: a FIFO, evaluate": lambda tmp, run, fake: (
        ["evaluate", "--task", "toy", "--target", "scripted:toy-target", "--skill",
         _skill(tmp, entry=lambda f: os.mkfifo(f / "notes.md")), "--out", str(tmp / "o")],
        ("notes.md", "FIFO"), NO_ENV),
    # a lone surrogate, and numbers past Python's digit limit, wherever they are parsed
    "task line: a surrogate in the input": lambda tmp, run, fake: (
        _train("--scorer", "exact", task=_task(tmp, _surrogate_row("input")), out=tmp / "o"),
        ("t.jsonl:1", "'input'", "surrogate"), NO_ENV),
    "task line: a surrogate in the id": lambda tmp, run, fake: (
        _train("--scorer", "exact", task=_task(tmp, _surrogate_row("id")), out=tmp / "o"),
        ("t.jsonl:1", "'id'", "surrogate"), NO_ENV),
    "config: a surrogate": lambda tmp, run, fake: (
        _train("--config", str(write(tmp / "c.json", '{"selector": "\\udc00"}')), out=tmp / "o"),
        ("c.json", "'selector'", "surrogate"), NO_ENV),
    "SKILL.md: a surrogate": lambda tmp, run, fake: (
        _train("--skill", _skill(tmp, 'license: "\\ud800"\n'), out=tmp / "o"),
        ("SKILL.md", "'license'", "surrogate"), NO_ENV),
    "config: 5000 digits": lambda tmp, run, fake: (
        _train("--config", str(write(tmp / "c.json", f'{{"seed": {BIG}}}')), out=tmp / "o"),
        ("c.json", "digits"), NO_ENV),
    "SKILL.md: 5000 digits": lambda tmp, run, fake: (
        _train("--skill", _skill(tmp, f"metadata:\n  v: {BIG}\n"), out=tmp / "o"),
        ("SKILL.md", "front matter", "digits"), NO_ENV),
    "grid file: 5000 digits": lambda tmp, run, fake: (
        ["grid", _grid(tmp, top=f"concurrency = {BIG}\n"), "--out", str(tmp / "o")],
        ("g.toml", "digits"), NO_ENV),
    "task line: 5000 digits": lambda tmp, run, fake: (
        _train(task=_task(tmp, ROWS.replace('"1", "split": "train"', f'{BIG}, "split": "train"')),
               out=tmp / "o"), ("t.jsonl:1", "digits"), NO_ENV),
    # flags
    "--scorer :": lambda tmp, run, fake: (
        _train("--scorer", ":", task=_task(tmp), out=tmp / "o"), ("scorer", "':'"), NO_ENV),
    "--scorer mod:": lambda tmp, run, fake: (
        _train("--scorer", "mod:", task=_task(tmp), out=tmp / "o"), ("scorer", "'mod:'"), NO_ENV),
    "--timeout 99999999999h": lambda tmp, run, fake: (
        _train("--timeout", "99999999999h", out=tmp / "o"), ("--timeout", "366 days"), NO_ENV),
    "--timeout 1h1h": lambda tmp, run, fake: (
        _train("--timeout", "1h1h", out=tmp / "o"), ("--timeout", "'1h1h'"), NO_ENV),
    "--timeout 30m1h": lambda tmp, run, fake: (
        _train("--timeout", "30m1h", out=tmp / "o"), ("--timeout",), NO_ENV),
    "grid --timeout 1h1h": lambda tmp, run, fake: (
        ["grid", _grid(tmp), "--out", str(tmp / "o"), "--timeout", "1h1h"], ("--timeout",),
        NO_ENV),
    "--concurrency 100000": lambda tmp, run, fake: (
        _train("--concurrency", "100000", out=tmp / "o"), ("--concurrency", "4096"), NO_ENV),
    "grid concurrency 100000": lambda tmp, run, fake: (
        ["grid", _grid(tmp, top="concurrency = 100000\n"), "--out", str(tmp / "o")],
        ("g.toml", "concurrency", "4096"), NO_ENV),
    "--data for a bundled task": lambda tmp, run, fake: (
        ["plan", "--task", "demo", "--data", str(tmp), *TOY], ("--data", "'demo'"), NO_ENV),
    "evaluate --skill A --skill B": lambda tmp, run, fake: (
        ["evaluate", "--task", "toy", "--target", "scripted:toy-target", "--skill",
         str(write(tmp / "a.txt", "A")), "--skill", str(write(tmp / "b.txt", "B")), "--out",
         str(tmp / "o")], ("--skill", "twice"), NO_ENV),
    "train --budget twice": lambda tmp, run, fake: (
        _train("--budget", "3x", "--budget", "6x", out=tmp / "o"), ("--budget", "twice"), NO_ENV),
    "compare A A": lambda tmp, run, fake: (["compare", str(run), str(run)], ("given twice",),
                                           NO_ENV),
    "--mlflow-experiment ''": lambda tmp, run, fake: (
        _train("--mlflow", f"sqlite:///{tmp}/m.db", "--mlflow-experiment", "", out=tmp / "o"),
        ("--mlflow-experiment", "empty"), NO_ENV),
    # grid files and grid flags: what a run refuses, --dry-run refuses too
    "grid methods = ['stratune'] beside full": lambda tmp, run, fake: (
        ["grid", _grid(tmp, top='methods = ["stratune"]\n'), "--out", str(tmp / "o")],
        ("ablations.stratune", "same cells", "'a'"), NO_ENV),
    "grid ablations of the same cells": lambda tmp, run, fake: (
        ["grid", _grid(tmp, ablations="a = { selector = 'fixed:I1' }\n"
                                      "b = { selector = 'fixed:I1' }"), "--out", str(tmp / "o")],
        ("ablations.b", "same cells"), NO_ENV),
    "grid --dry-run --max-connections anthropic=0": lambda tmp, run, fake: (
        ["grid", _grid(tmp), "--out", str(tmp / "o"), "--dry-run", "--max-connections",
         "anthropic=0"], ("--max-connections", "anthropic=0"), NO_ENV),
    "grid --dry-run --max-connections =5": lambda tmp, run, fake: (
        ["grid", _grid(tmp), "--out", str(tmp / "o"), "--dry-run", "--max-connections", "=5"],
        ("--max-connections", "'=5'"), NO_ENV),
    "grid --ship without --ray": lambda tmp, run, fake: (
        ["grid", _grid(tmp), "--out", str(tmp / "o"), "--ship"], ("--ship", "--ray"), NO_ENV),
    "grid --ray-pass-env without --ray": lambda tmp, run, fake: (
        ["grid", _grid(tmp), "--out", str(tmp / "o"), "--ray-pass-env", "--dry-run"],
        ("--ray-pass-env", "--ray"), NO_ENV),
    "grid: a 300-character ablation name": lambda tmp, run, fake: (
        ["grid", _grid(tmp, ablations=f"{'a' * 300} = {{}}"), "--out", str(tmp / "o")],
        ("g.toml", "ablations.aaaa", "at most 100"), NO_ENV),
    "grid: a 300-character task name": lambda tmp, run, fake: (
        ["grid", _grid(tmp, task="t" * 300), "--out", str(tmp / "o")],
        ("tasks.tttt", "at most 100"), NO_ENV),
    # model specs
    "a zero-width space in a model name": lambda tmp, run, fake: (
        _train(target="anthropic:claude-haiku\u200b-4-5", out=tmp / "o"),
        ("model name", "U+200B"), {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake}),
    "a direction mark in an option": lambda tmp, run, fake: (
        ["plan", "--task", "toy", "--target", f"{HAIKU}?max_retries=1\u200f", "--optimizer",
         "scripted:toy-optimizer"], ("max_retries=", "U+200F"), NO_ENV),
    "?timeout=1&timeout=2": lambda tmp, run, fake: (
        ["plan", "--task", "toy", "--target", f"{HAIKU}?timeout=1&timeout=2", "--optimizer",
         "scripted:toy-optimizer"], ("timeout=", "twice"), NO_ENV),
    # endpoints: one line at once, where each call used to retry for 33-37 s
    "?base_url=file:///": lambda tmp, run, fake: (
        _train(target=f"{HAIKU}?base_url=file:///etc/passwd", out=tmp / "o"),
        ("base_url=", "http(s)"), {"ANTHROPIC_API_KEY": "k"}),
    "a leading space in ANTHROPIC_BASE_URL": lambda tmp, run, fake: _with(
        _haiku(tmp, fake, ANTHROPIC_BASE_URL=" " + fake), "ANTHROPIC_BASE_URL", "spaces"),
    "ANTHROPIC_BASE_URL file:": lambda tmp, run, fake: _with(
        _haiku(tmp, fake, ANTHROPIC_BASE_URL="file:///tmp"), "ANTHROPIC_BASE_URL", "http(s)"),
    "a key holding a newline": lambda tmp, run, fake: _with(
        _haiku(tmp, fake, ANTHROPIC_API_KEY="sk-ant-SECRET-0001\nx"), "ANTHROPIC_API_KEY",
        "newline"),
    "?api_key= holding a space": lambda tmp, run, fake: (
        _train(target=f"openai:m@{fake}/v1?api_key=sk-SECRET-0001%20x", out=tmp / "o"),
        ("?api_key=", "space"), NO_ENV),
    "a dead HTTPS proxy": lambda tmp, run, fake: _with(
        _haiku(tmp, fake, ANTHROPIC_BASE_URL="https://api.anthropic.com",
               HTTPS_PROXY="http://127.0.0.1:9"), "https proxy", "127.0.0.1:9"),
    "a dead HTTP proxy": lambda tmp, run, fake: _with(
        _haiku(tmp, fake, HTTP_PROXY="http://127.0.0.1:9"), "http proxy", "127.0.0.1:9"),
    "a dead proxy, an OpenAI-compatible server": lambda tmp, run, fake: (
        _train(target=f"openai:m@{fake}/v1", out=tmp / "o"), ("proxy", "127.0.0.1:9"),
        {"HTTP_PROXY": "http://127.0.0.1:9"}),
    # a user scorer that calls os._exit (run in a subprocess below: it would end this one)
}


@pytest.fixture
def counted(monkeypatch) -> list[int]:
    """The scripted models' calls, counted where every backend call goes through."""
    calls = [0]
    original = FunctionBackend.acomplete

    async def counting(self, request):
        calls[0] += 1
        return await original(self, request)

    monkeypatch.setattr(FunctionBackend, "acomplete", counting)
    return calls


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest.mark.parametrize("name", sorted(CASES))
def test_refused_in_one_line_before_anything_is_paid(run, fake, tmp_path, capsys, monkeypatch,
                                                     counted, name):
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        for variant in (proxy, proxy.lower()):
            monkeypatch.delenv(variant, raising=False)
    argv, names, env = CASES[name](tmp_path, run, fake.url)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    before = sorted(p.name for p in tmp_path.iterdir())
    sent = len(fake.requests)
    with cwd(tmp_path):
        said = refused(capsys, argv, *names)
    assert "SECRET-0001" not in said
    assert counted == [0] and len(fake.requests) == sent  # no model request
    assert not (tmp_path / "o").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_scorer_calling_os_exit_is_one_line_not_exit_0(tmp_path):
    """`os._exit(0)` in a scorer ended `train` at once with exit code 0, as if it had
    finished; it is reported as its `sys.exit` is."""
    write(tmp_path / "exiting.py", "import os\ndef score(answer, expected):\n    os._exit(0)\n")
    done = stratune_cli(*_train("--scorer", "exiting:score", task=_task(tmp_path),
                                out=tmp_path / "o"), cwd=tmp_path, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert "exiting:score" in done.stderr and "os._exit(0)" in done.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("columns", ["100000000", "0", "-5", "x"])
def test_view_at_any_columns_prints_within_bounds(run, capsys, monkeypatch, columns):
    """COLUMNS is held within [40, 1000] as --width is: 100000000 laid the tables out for
    minutes, 0 printed nothing."""
    monkeypatch.setenv("COLUMNS", columns)
    assert main(["view", str(run)]) == 0
    out = capsys.readouterr().out
    widest = max(len(line) for line in out.splitlines())
    assert "rounds" in out and 40 <= widest <= 1000, widest


def test_mlflow_file_uri_the_documented_form_is_accepted(tmp_path, monkeypatch):
    """`--mlflow file:/abs/mlruns`, which --help documents, was refused by MLflow 3 (it
    allows its file store only with MLFLOW_ALLOW_FILE_STORE, which a file: URI now sets)."""
    pytest.importorskip("mlflow")
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    store = tmp_path / "mlruns"
    with cwd(tmp_path):
        code = main([*TRAIN, "--budget", "100", "--mlflow", f"file:{store}", "--out",
                     str(tmp_path / "o")])
    assert code == 0
    assert (tmp_path / "o" / "manifest.json").is_file() and any(store.iterdir())


def test_skill_md_path_trains_on_the_body(tmp_path):
    """`--skill DIR/SKILL.md` names the folder: the initial skill is the body, never the front
    matter (checked here; it held on main already)."""
    folder = Path(_skill(tmp_path))
    with cwd(tmp_path):
        assert main([*TRAIN, "--budget", "70", "--skill", str(folder / "SKILL.md"), "--out",
                     str(tmp_path / "o")]) == 0
    run = stratune.load_run(tmp_path / "o")
    assert run.initial_skill == "Answer with the word."


def test_plan_says_the_budget_a_baseline_refuses(capsys):
    """`plan --method gepa --budget 1` showed the plan of a run `train` refuses."""
    assert main(["plan", "--task", "toy", *TOY, "--method", "gepa", "--budget", "1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "warning: 1 executions cannot pay for one step of --method gepa" in out
    assert "`stratune train` refuses it" in out


def test_demo_live_refuses_its_out_before_the_build(tmp_path, capsys, monkeypatch):
    """`demo --live --out EXISTING` installed and built llama.cpp for minutes before it
    refused a directory of other files."""
    from replay.models import local_model

    def no_build(*_args, **_kwargs):
        raise AssertionError("the build started before --out was checked")

    monkeypatch.setattr(local_model, "ensure", no_build)
    out = tmp_path / "o"
    out.mkdir()
    write(out / "notes.txt", "mine")
    refused(capsys, ["demo", "--live", "--out", str(out)], "--out", "notes.txt")
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize(("text", "seconds"), [("1h30m", 5400), ("1d2h3m4s", 93784),
                                               ("366d", 366 * 86400), ("2.5h", 9000)])
def test_durations_still_read(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["1h1h", "30m1h", "1s1m", "367d", "1e300", "99999999999h"])
def test_one_duration_parser_refuses_repeats_and_overflow(text):
    with pytest.raises(ConfigError, match="--timeout"):
        parse_duration(text)


def test_api_initial_skill_over_the_limit_is_refused(tmp_path, counted):
    """`optimize(initial_skill=)` takes the limit a SKILL.md body has (200,000 characters)."""
    rows = [(f"say {w}", w) for w in ("a", "b", "c", "d")]
    with models.using(toy_extensions()), pytest.raises(ConfigError, match="initial_skill: 300,0"):
        stratune.optimize(rows, target="scripted:toy-target", optimizer="scripted:toy-optimizer",
                          out=tmp_path / "o", initial_skill="x" * 300_000, budget=20)
    assert counted == [0] and not (tmp_path / "o").exists()


def test_api_concurrency_is_bounded(tmp_path, counted):
    with models.using(toy_extensions()), pytest.raises(ConfigError, match="concurrency"):
        stratune.optimize("toy", target="scripted:toy-target", optimizer="scripted:toy-optimizer",
                          out=tmp_path / "o", concurrency=100_000)
    assert counted == [0] and not (tmp_path / "o").exists()


def test_dspy_optimizer_refuses_an_unknown_target_when_made(tmp_path):
    """`StraTune(target='nosuch:x')` was accepted until `compile` had read the program."""
    dspy_module = pytest.importorskip("stratune.dspy")
    with pytest.raises(ConfigError, match="nosuch"):
        dspy_module.StraTune(lambda example, prediction, trace=None: 1.0, target="nosuch:x",
                             optimizer="scripted:toy-optimizer", out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_case_count():
    """The closing note's figure: round-5 bad inputs refused through the command."""
    print(f"round-5 bad inputs refused: {len(CASES)} (+ os._exit, COLUMNS x4, API x3)")
    assert len(CASES) >= 40
