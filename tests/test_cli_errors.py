"""Bad input to the `stratune` command: exit code 2, one line on stderr that names the file,
line, field or flag, no traceback, nothing written.

The named cases below are the ones users hit; a hypothesis test then
drives the command with generated malformed arguments and files. The toy world is plugged in
as the tests' entry module does it (`tests.support.cli.main`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stratune_core.config.knobs import Config
from tests.support.cli import TOY_RUN, main, record_in_process
from tests.support.disks import remount, tmpfs

TRAIN = ["train", *TOY_RUN]
ROW = {"id": "q1", "input": "What is 1 + 1?", "expected": "2", "split": "train"}
TEST_ROW = {**ROW, "id": "q2", "split": "test"}


def _refused(capsys, argv: list[str], *names: str) -> str:
    code = main(argv)
    captured = capsys.readouterr()
    said = captured.out + captured.err
    assert code == 2, f"{argv}: exit {code}: {said}"
    assert captured.err.startswith("error: ") and captured.err.count("\n") == 1, said
    assert "Traceback" not in said, said
    for name in names:
        assert name in captured.err, f"{name!r} not named in: {captured.err}"
    return captured.err


def _task(tmp: Path, lines: list[bytes], name: str = "task.jsonl") -> str:
    path = tmp / name
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return str(path)


def _json(row: dict) -> bytes:
    return json.dumps(row).encode()


def _scorer(tmp: Path, body: str) -> str:
    name = f"scorer_{tmp.name.replace('-', '_')}"  # a module of its own for each test
    (tmp / f"{name}.py").write_text(f"def score(answer, expected):\n    {body}\n")
    return f"{name}:score"


@contextlib.contextmanager
def _cwd(path: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[Path]:
    """A directory on a read-only file system (a tmpfs mounted read-only, as root), or one
    the (non-root) user may not write."""
    if os.geteuid() == 0:
        with tmpfs(path, "ro,size=1m"):
            yield path
        return
    path.mkdir()
    path.chmod(0o555)
    try:
        yield path
    finally:
        path.chmod(0o755)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    return record_in_process(tmp_path_factory.mktemp("errors") / "run")


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
        [*TRAIN[:2], _task(tmp, [_json(ROW), b'{"id": "q2", "input": "caf\xe9"}']),
         *TRAIN[3:], "--out", str(tmp / "o")], ("task.jsonl:2", "not UTF-8", "byte 0xe9")),
    "blank input": lambda tmp, run: (
        ["plan", "--task", _task(tmp, [_json({**ROW, "input": "  \t"}), _json(TEST_ROW)]),
         *TRAIN[3:]], ("task.jsonl:1", "'input'", "empty")),
    "empty expected": lambda tmp, run: (
        ["plan", "--task", _task(tmp, [_json(ROW), _json({**TEST_ROW, "expected": ""})]),
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
        ["plan", "--task", _task(tmp, [_json(ROW), _json(TEST_ROW)]), "--scorer",
         _scorer(tmp, "raise ValueError('bad gold')"), *TRAIN[3:]],
        (":score", "ValueError", "sample q1")),
    "scorer returns None": lambda tmp, run: (
        ["plan", "--task", _task(tmp, [_json(ROW), _json(TEST_ROW)]), "--scorer",
         _scorer(tmp, "return None"), *TRAIN[3:]], (":score", "None", "sample q1")),
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
        [*TRAIN, "--config", str(_write(tmp / "c.json", '{"z": NaN}')), "--out", str(tmp / "o")],
        ("c.json", "NaN")),
    "config Infinity": lambda tmp, run: (
        [*TRAIN, "--config", str(_write(tmp / "c.json", '{"delta": -Infinity}')), "--out",
         str(tmp / "o")], ("c.json", "Infinity")),
    "config not UTF-8": lambda tmp, run: (
        [*TRAIN, "--config", str(_write(tmp / "c.json", b'{"seed": "\xff"}')), "--out",
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
        ["grid", str(_write(tmp / "g.toml", bytes(range(256)) * 4)), "--out", str(tmp / "o")],
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
        [*TRAIN, "--config", str(_write(tmp / "c.json", '{"n_batches": 100000000000000000000000}')),
         "--out", str(tmp / "o")], ("n_batches", "c.json", "training samples")),
    "config key twice": lambda tmp, run: (
        [*TRAIN, "--config", str(_write(tmp / "c.json", '{"seed": 1, "z": 1.0, "seed": 2}')),
         "--out", str(tmp / "o")], ("c.json", "'seed'", "twice")),
    "config key twice, nested": lambda tmp, run: (
        [*TRAIN, "--config", str(_write(tmp / "c.json", '{"selector": {"a": 1, "a": 2}}')),
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
         "scripted:toy-target", "--cache-dir", str(_write(tmp / "f", "x"))],
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
}


def _grid(tmp: Path, *, task: str = "toy", scorer: str | None = None) -> Path:
    scored = f"scorer = '{scorer}'\n" if scorer else ""
    return _write(tmp / "grid.toml", f"seeds = 1\n[tasks.t]\ntask = '{task}'\n{scored}"
                  "[pairs.p]\ntarget = 'scripted:toy-target'\n"
                  "optimizer = 'scripted:toy-optimizer'\n[ablations]\nfull = {}\n")


def _copy(run: Path, to: Path) -> Path:
    shutil.copytree(run, to)
    return to


def _grid_dir(path: Path) -> Path:
    path.mkdir()
    _write(path / "grid.toml", "seeds = 1\n")
    return path


def _write(path: Path, content: str | bytes) -> Path:
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


# Cases refused about the directory they were given, which exists beforehand (and may get its
# lock file).
KEEPS_OUT = ("grid on a run directory", "train on a grid directory",
             "cache.db header damaged: train")


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_is_one_line_and_exit_2(run, tmp_path, capsys, name):
    argv, names = CASES[name](tmp_path, run)
    before = sorted(p.name for p in tmp_path.iterdir())
    with _cwd(tmp_path):
        said = _refused(capsys, argv, *names)
    assert "sk-SECRET-0001" not in said
    if name in KEEPS_OUT:
        return
    assert not (tmp_path / "o").exists()  # refused before the run directory was made
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nor anything else


def test_bad_input_count():
    """The closing note's figure: named bad inputs tried through the command (each is refused
    in one line with exit 2 by the test above)."""
    assert len(CASES) >= 62
    print(f"named bad inputs tried: {len(CASES)}")


def test_out_on_a_read_only_file_system(tmp_path, capsys):
    with read_only(tmp_path / "ro") as ro:
        _refused(capsys, [*TRAIN, "--out", str(ro / "run")], "--out", str(ro))
        _refused(capsys, [*TRAIN, "--out", str(ro)], "--out", str(ro))


def test_cache_stats_on_a_read_only_cache(run, tmp_path, capsys):
    """Not an error at all: stats open the cache read-only and create no file."""
    with read_only(tmp_path / "ro") as ro:
        if os.geteuid() == 0:  # fill the read-only tmpfs: remount it writable for a moment
            remount(ro, "rw")
            shutil.copytree(run / "cache", ro / "cache")
            remount(ro, "ro")
        else:
            ro.chmod(0o755)
            shutil.copytree(run / "cache", ro / "cache")
            (ro / "cache").chmod(0o555)
            ro.chmod(0o555)
        before = sorted(p.name for p in (ro / "cache").iterdir())
        assert main(["cache", "stats", "--cache-dir", str(ro / "cache")]) == 0
        assert "entries" in capsys.readouterr().out
        assert sorted(p.name for p in (ro / "cache").iterdir()) == before
        if os.geteuid() != 0:
            (ro / "cache").chmod(0o755)


def test_the_documented_cache_dir_placement_works(run, capsys):
    for argv in (["cache", "stats", "--cache-dir", str(run / "cache")],
                 ["cache", "--cache-dir", str(run / "cache"), "stats"]):
        assert main(argv) == 0
        assert f"cache {run / 'cache'}:" in capsys.readouterr().out


def test_a_missing_cache_is_never_created(tmp_path, capsys):
    for command in (["stats"], ["explain", "0" * 32], ["prune", "--corrupt"]):
        _refused(capsys, ["cache", "--cache-dir", str(tmp_path / "typo"), *command], "typo")
    assert not (tmp_path / "typo").exists()


def test_out_of_range_config_is_refused(tmp_path, capsys):
    config = _write(tmp_path / "c.json", '{"delta": 1.5}')
    _refused(capsys, [*TRAIN, "--config", str(config), "--out", str(tmp_path / "o")], "delta")
    assert not (tmp_path / "o").exists()


# ---- generated ---------------------------------------------------------------------------------

def _not(parse: Callable[[str], object]) -> Callable[[str], bool]:
    def refused(text: str) -> bool:
        try:
            parse(text)
        except Exception:
            return True
        return False
    return refused


def _budget(text: str) -> object:
    from replay.options import parse_budget
    return parse_budget(text)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
               min_size=1, max_size=12).filter(lambda t: not t.startswith("-"))
FLAG_VALUES = {
    "--budget": TEXT.filter(_not(_budget)),
    "--concurrency": TEXT.filter(_not(_positive)),
    "--limit": TEXT.filter(_not(_positive)),
    "--seed": TEXT.filter(_not(int)),
    "--max-rounds": TEXT.filter(_not(lambda t: int(t) >= 0 or int("x"))),
    "--profile": TEXT.filter(lambda t: t not in ("paper", "released")),
    "--placement": TEXT.filter(lambda t: t not in ("system", "user_prefix", "user_suffix")),
    "--forms": TEXT.filter(lambda t: t not in ("all", "F4")),
    "--scorer": TEXT,  # the toy task takes no scorer
}
BYTES_NOT_UTF8 = st.binary(min_size=1, max_size=40).filter(_not(lambda b: b.decode("utf-8")))
JSON_JUNK = st.one_of(
    st.just(b"{"), st.just(b"[1, 2"), st.just(b'{"z": NaN}'), st.just(b'{"seed": Infinity}'),
    st.just(b"[]"), st.just(b"3"), st.just(b'"text"'), BYTES_NOT_UTF8,
    st.sampled_from(["delta", "z", "final_select_frac", "eps_v", "i3_k"]).flatmap(
        lambda name: st.sampled_from([-1, 1.5, 1e309, -1e-9, 0]).map(
            lambda v: json.dumps({name: v}).encode())).filter(
        _not(lambda b: Config(**json.loads(b)))),  # only values the validators refuse
    st.dictionaries(st.text(min_size=1, max_size=6).filter(lambda k: k not in Config.__annotations__),
                    st.integers(), min_size=1, max_size=3).map(lambda d: json.dumps(d).encode()),
)
TASK_JUNK = st.lists(st.one_of(
    BYTES_NOT_UTF8, JSON_JUNK,
    st.fixed_dictionaries({"id": st.just("q"), "input": st.sampled_from(["", "  ", "\t"]),
                           "expected": st.just("1"), "split": st.just("train")}).map(
        lambda d: json.dumps(d).encode()),
    st.fixed_dictionaries({"id": st.just("q"), "input": st.just("x"),
                           "expected": st.sampled_from(["", " ", [], [""], {}, None]),
                           "split": st.just("test")}).map(lambda d: json.dumps(d).encode()),
), min_size=1, max_size=4)


@st.composite
def malformed(draw: st.DrawFn, tmp: Path) -> list[str]:
    kind = draw(st.sampled_from(["flag", "task", "config", "skill", "out", "dir", "cache"]))
    base = [*TRAIN, "--out", str(tmp / "o")]
    if kind == "flag":
        flag = draw(st.sampled_from(sorted(FLAG_VALUES)))
        return [*base, f"{flag}={draw(FLAG_VALUES[flag])}"]
    if kind == "task":
        lines = [*draw(TASK_JUNK), _json(ROW), _json(TEST_ROW)]
        order = draw(st.permutations(lines))
        return ["plan", "--task", _task(tmp, list(order)), *TRAIN[3:]]
    if kind == "config":
        return [*base, "--config", str(_write(tmp / "c.json", draw(JSON_JUNK)))]
    if kind == "skill":
        content = draw(st.one_of(BYTES_NOT_UTF8, st.just(b""), st.just(b" \n\t")))
        return ["evaluate", "--skill", str(_write(tmp / "s.txt", content)), "--task", "toy",
                "--target", "scripted:toy-target"]
    if kind == "out":
        return [*TRAIN, "--out", str(_write(tmp / "taken", draw(st.binary(max_size=10))))]
    if kind == "dir":
        junk = tmp / "junk"
        junk.mkdir(exist_ok=True)
        _write(junk / draw(st.sampled_from(["manifest.json", "events.jsonl"])),
               draw(JSON_JUNK))
        return [draw(st.sampled_from(["view", "replay"])), str(junk)]
    cache = tmp / "cache"
    cache.mkdir(exist_ok=True)
    _write(cache / "cache.db", draw(st.binary(min_size=1, max_size=200)))
    command = draw(st.sampled_from([["stats"], ["explain", "0" * 32], ["prune", "--corrupt"]]))
    return ["cache", "--cache-dir", str(cache), *command]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                     HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_generated_bad_input_is_one_line_and_exit_2(data, capsys):
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        argv = data.draw(malformed(tmp))
        with _cwd(tmp):
            _refused(capsys, argv)
        assert not (tmp / "o").exists()
