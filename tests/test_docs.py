"""The README and the docs site say what the code does: the README stays short with the two
set-up commands on its first screen, every `stratune` command the docs show parses, and the
figures the pages quote from the code or from committed traces (prompt version, `stratune demo`'s
summary, the runs table of `compare`, the released profile's toy runs, the baselines' recording
figures) are what the code and the traces give today. (Links and anchors: tests/test_docs_links.py and `make docs`.)"""

from __future__ import annotations

import io
import json
import re
import shlex
from pathlib import Path

import pytest
from rich.console import Console

from replay.commands.app import build_parser
from replay.commands.app import main as stratune
from replay.commands.demo import demo
from stratune_core.config.layers import config_keys
from stratune_core.config.mechanisms import MECHANISMS
from stratune_core.prompts.templates import PROMPT_VERSION
from tests.support.docs import README, ROOT, block_after, blocks, page, texts
from tests.support.mechanisms import CLOSING

README_TEXT = README.read_text(encoding="utf-8")
FIRST_SCREEN = 24  # lines a terminal or a repository page shows before scrolling


def test_the_readme_is_short():
    assert len(README_TEXT.splitlines()) <= 300


def test_the_two_set_up_commands_are_on_the_first_screen():
    first = "\n".join(README_TEXT.splitlines()[:FIRST_SCREEN])
    commands = [line.split("#")[0].strip() for line in block_after(first, "# StraTune", "bash")
                .splitlines()]
    assert commands == ["make demo", "make test"]


def _commands() -> list[tuple[str, str]]:
    """(where, command) of every `stratune` command in a shell block of the README or the docs
    (continuation lines joined, `[optional parts]` left out), and of every `$ stratune` line of a
    transcript block."""
    found = []
    for name, text in texts():
        for language, body in blocks(text):
            lines = re.sub(r"\\\n\s*", " ", body).splitlines()
            if language == "":  # a transcript: only the lines typed at the prompt
                lines = [line[2:] for line in lines if line.startswith("$ ")]
            elif language != "bash":
                continue
            for line in lines:
                words = shlex.split(re.sub(r"\s\[[^\]]*\]", "", line), comments=True)
                if words and Path(words[0]).name == "stratune":
                    found.append((name, shlex.join(words)))
    return found


COMMANDS = _commands()


def test_the_docs_show_every_subcommand():
    shown = {shlex.split(command)[1] for _, command in COMMANDS}
    assert shown >= {"train", "plan", "evaluate", "replay", "view", "demo", "cache", "grid",
                     "compare"}


@pytest.mark.parametrize(("where", "command"), COMMANDS,
                         ids=[f"{w}: {c[:60]}" for w, c in COMMANDS])
def test_every_command_the_docs_show_parses(where, command, capsys):
    try:
        build_parser().parse_args(shlex.split(command)[1:])
    except SystemExit:
        pytest.fail(f"{where}: `{command}` is refused: {capsys.readouterr().err.strip()}")


def test_the_prompt_version_the_docs_give_is_the_codes_and_the_demo_traces():
    said = re.search(r"`stratune_core\.prompts\.templates\.PROMPT_VERSION`, now `(\w+)`", page("optimizer.md"))
    assert said and said.group(1) == PROMPT_VERSION
    recorded = json.loads((ROOT / "traces" / "demo" / "manifest.json").read_text())
    said = re.search(r"recorded\s+with prompt version (\w+)", page("demo-trace.md"))
    assert said and said.group(1) == recorded["prompt_version"]


def _same_lines(shown: str, printed: str) -> bool:
    def lines(text: str) -> list[str]:
        return [line.rstrip() for line in text.strip().splitlines()]
    return lines(shown) == lines(printed)


def test_the_demo_trace_page_shows_what_stratune_demo_prints():
    buffer = io.StringIO()
    assert demo(Console(file=buffer, width=80), ROOT / "traces" / "demo") == 0
    shown = block_after(page("demo-trace.md"), "`stratune demo` (about")
    assert _same_lines(shown, buffer.getvalue().replace(str(ROOT / "traces") + "/", "")), \
        "docs/demo-trace.md shows another `stratune demo` summary: paste the new one (80 columns)"


def test_the_demo_trace_page_shows_the_runs_table_compare_prints(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    text = page("demo-trace.md")
    command = re.search(r"`(stratune compare\s+traces/\* [^`]+)` prints:", text)
    assert command is not None
    runs = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "traces").iterdir() if p.is_dir())
    words = shlex.split(command.group(1))
    assert stratune([*words[1:2], *runs, *words[3:]]) == 0
    shown = text[command.end():text.index("Read it plainly.")]
    assert _same_lines(shown, capsys.readouterr().out)


def test_the_released_profiles_toy_runs_are_the_tests_runs():
    """docs/profiles.md shows the three toy runs that tests/test_released_run.py makes."""
    shown = block_after(page("profiles.md"), "Every mechanism at work", "bash")
    lines = shlex.split(re.sub(r"\\\n\s*", " ", shown), comments=True)
    for name, closing in CLOSING.items():
        out = f"runs/released-{name.lower()}"
        args = [str(Path(a).relative_to(ROOT)) if a.startswith(str(ROOT)) else a
                for a in closing.args()]
        expected = ["python", "-m", "tests.support.cli", "train", *args, "--out", out]
        assert " ".join(expected) in " ".join(lines)



def test_the_released_profile_table_names_config_keys_and_every_mechanism():
    """docs/profiles.md's released-profile table: every key in its profile columns is one a
    config file may set, and every released mechanism with parameters is named by its switch."""
    text = page("profiles.md")
    table = text[text.index("| mechanism | paper profile |"):text.index("Absent from the released")]
    named = set()
    for row in table.splitlines()[2:]:
        cells = re.split(r"(?<!\\)\|", row)[2:4]  # the paper and the released profile's columns
        named |= {m.split(":")[0] for cell in cells for m in re.findall(r"`([^`]+)`", cell)}
    assert named <= set(config_keys()), sorted(named - set(config_keys()))
    switches = {record.SWITCH for record in MECHANISMS.values()}
    assert switches <= named, sorted(switches - named)


# run, method, the seed where a table has that column, spent / B, test before → after, gain
RECORDED_ROW = re.compile(r"^\| `(traces/[\w.-]+)` \| [^|]+ \|(?: (\d+) \|)? (\d+) / (\d+) \| ([\d.]+) → "
                          r"([\d.]+) \| ([+−]\d\.\d+) \|", re.M)


@pytest.mark.parametrize("doc", ["README.md", "docs/baselines.md"])
def test_the_recorded_results_tables_match_the_traces(doc):
    """Every row of the demo-slice results (README, docs/baselines.md) gives its trace's spent
    executions, budget, test scores before and after and their paired gain, as the trace
    records them."""
    rows = RECORDED_ROW.findall((ROOT / doc).read_text())
    assert len(rows) >= 5
    for run, seed, spent, budget, before, after, gain in rows:
        if seed:
            recorded_seed = json.loads((ROOT / run / "manifest.json").read_text())["seed"]
            assert int(seed) == recorded_seed, f"{doc}: {run} was recorded with seed {recorded_seed}"
        events = [json.loads(line) for line in (ROOT / run / "events.jsonl").open()]
        finished = next(e for e in reversed(events) if e["_type"] == "RunFinished")
        scores = json.loads((ROOT / run / "evaluation.json").read_text())["scores"]
        initial, final = scores[events[0]["initial_skill_id"]], scores[finished["final_id"]]
        shown = (int(spent), int(budget), before, after, gain)
        recorded = (finished["spent"], finished["budget"], f"{initial:.3f}", f"{final:.3f}",
                    f"{final - initial:+.3f}".replace("-", "−"))
        assert shown == recorded, f"{doc}: the row of {run} says {shown}; the trace {recorded}"


def _optimizer_entries(run: str) -> list:
    from llm_cache.reader import CacheReader

    return [entry for _, entry in CacheReader(ROOT / run / "cache").entries()
            if entry.document()["role"] == "optimizer"]


def test_the_recording_figures_are_the_trace_caches():
    """docs/baselines.md's recording times: GEPA's reflections that ran to the token limit, their
    mean output and seconds, as the cache of traces/demo-gepa records each call."""
    text = re.sub(r"\s+", " ", page("baselines.md"))
    gepa = re.search(r"(\d+) of the 1\.5B optimizer's (\d+) reflections ran to the (\d+)-token "
                     r"limit \((\d+) output tokens and (\d+) s per reflection on average", text)
    assert gepa is not None, "docs/baselines.md no longer quotes GEPA's reflections"
    calls = _optimizer_entries("traces/demo-gepa")
    at_limit = [e for e in calls if e.response.stop_reason == "max_tokens"]
    limit = {e.document()["max_tokens"] for e in calls}
    assert [int(n) for n in gepa.groups()] == [
        len(at_limit), len(calls), *limit,
        round(sum(e.response.usage.output_tokens for e in calls) / len(calls)),
        round(sum(e.latency_s for e in calls) / len(calls))]
