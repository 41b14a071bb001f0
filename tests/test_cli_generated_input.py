"""Generated bad input to the `stratune` command: malformed flags, task files, configs, skills,
output paths, run directories and caches, each refused in one line with exit 2 and nothing
written."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stratune_core.config.knobs import Config
from tests.support.refusals import ROW, TEST_ROW, TRAIN, cwd, json_line, refused, task_file, write


def _not(parse: Callable[[str], object]) -> Callable[[str], bool]:
    def refused(text: str) -> bool:
        try:
            parse(text)
        except Exception:
            return True
        return False
    return refused


def _budget(text: str) -> object:
    from replay.run.options import parse_budget
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
        lines = [*draw(TASK_JUNK), json_line(ROW), json_line(TEST_ROW)]
        order = draw(st.permutations(lines))
        return ["plan", "--task", task_file(tmp, list(order)), *TRAIN[3:]]
    if kind == "config":
        return [*base, "--config", str(write(tmp / "c.json", draw(JSON_JUNK)))]
    if kind == "skill":
        content = draw(st.one_of(BYTES_NOT_UTF8, st.just(b""), st.just(b" \n\t")))
        return ["evaluate", "--skill", str(write(tmp / "s.txt", content)), "--task", "toy",
                "--target", "scripted:toy-target"]
    if kind == "out":
        return [*TRAIN, "--out", str(write(tmp / "taken", draw(st.binary(max_size=10))))]
    if kind == "dir":
        junk = tmp / "junk"
        junk.mkdir(exist_ok=True)
        write(junk / draw(st.sampled_from(["manifest.json", "events.jsonl"])),
               draw(JSON_JUNK))
        return [draw(st.sampled_from(["view", "replay"])), str(junk)]
    cache = tmp / "cache"
    cache.mkdir(exist_ok=True)
    write(cache / "cache.db", draw(st.binary(min_size=1, max_size=200)))
    command = draw(st.sampled_from([["stats"], ["explain", "0" * 32], ["prune", "--corrupt"]]))
    return ["cache", "--cache-dir", str(cache), *command]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                     HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_generated_bad_input_is_one_line_and_exit_2(data, capsys):
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        argv = data.draw(malformed(tmp))
        with cwd(tmp):
            refused(capsys, argv)
        assert not (tmp / "o").exists()
