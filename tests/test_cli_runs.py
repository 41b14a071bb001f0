"""`stratune train` on a user's own JSONL task, as a user runs it: the task path is stored so a
replay works from any directory; a scorer that fails mid-run stops the run with one line naming
the sample, and the same command resumes once the scorer is fixed; messages keep their
brackets (rich markup never eats `[local]`); replay's advice names a command that exists."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from llm_cache.store import CacheStore
from tests.support.cli import main, record_in_process, stratune
from tests.support.toy import expected_answer, make_samples

MODELS = ("--target", "scripted:toy-target", "--optimizer", "scripted:toy-optimizer")


def _task_folder(folder: Path) -> None:
    """The toy words as a custom JSONL task (the scripted target answers them the same way)."""
    folder.mkdir()
    rows = []
    for split, samples in (("train", make_samples(24)), ("test", make_samples(6, offset=500))):
        for s in samples:
            word, marker = s.payload["word"], s.payload["marker"]
            rows.append({"id": s.id, "input": f"Word: {word} [{marker}]",
                         "expected": expected_answer(word, marker), "split": split,
                         "stratum": marker})
    (folder / "words.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "initial_skill.txt").write_text("Answer with the word.\nReturn the final answer "
                                              "inside <answer>...</answer> tags.\n")


def _scorer(folder: Path, fail_on: str | None) -> None:
    check = f"    if {fail_on!r} in answer:\n        return None\n" if fail_on else ""
    (folder / "word_scorer.py").write_text(
        "import re\n\ndef score(answer, expected):\n" + check
        + "    found = re.search(r'<answer>(.*?)</answer>', answer)\n"
        + "    return float(bool(found) and found.group(1).strip() == expected)\n")


def test_a_task_path_given_relative_replays_from_anywhere(tmp_path):
    work = tmp_path / "work"
    _task_folder(work)
    done = stratune("train", "--task", "words.jsonl", *MODELS, "--out", "run", cwd=work)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((work / "run" / "manifest.json").read_text())
    assert manifest["task"]["spec"] == str(work / "words.jsonl")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    replayed = stratune("replay", str(work / "run"), cwd=elsewhere)
    assert replayed.returncode == 0 and "replay OK" in replayed.stdout, replayed.stdout
    again = stratune("train", "--task", str(work / "words.jsonl"), *MODELS, "--out",
                     str(work / "run"), cwd=elsewhere)  # the same run, named another way
    assert again.returncode == 0 and "reproduced identically" in again.stdout, again.stderr


def test_a_scorer_failing_mid_run_names_the_sample_and_the_run_resumes(tmp_path):
    work = tmp_path / "work"
    _task_folder(work)
    failing = next(s for s in make_samples(24)[1:] if s.payload["marker"] == "P")
    _scorer(work, fail_on=failing.payload["word"])
    command = ("train", "--task", "words.jsonl", "--scorer", "word_scorer:score", *MODELS,
               "--out", "run")
    stopped = stratune(*command, cwd=work)
    assert stopped.returncode == 2, stopped.stdout + stopped.stderr
    assert stopped.stderr.count("\n") == 1 and "Traceback" not in stopped.stderr
    assert f"for sample {failing.id}" in stopped.stderr and "None" in stopped.stderr
    cached = CacheStore(work / "run" / "cache")
    paid = len(cached)
    cached.close()
    assert paid > 0  # the calls made before the failure are kept
    _scorer(work, fail_on=None)
    resumed = stratune(*command, cwd=work)
    assert resumed.returncode == 0, resumed.stderr
    usage = json.loads((work / "run" / "usage.json").read_text())
    assert usage["total"]["cache_hits"] >= paid


def test_the_llama_cpp_install_hint_keeps_its_brackets(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # as if the extra were not installed
    code = main(["train", "--task", "toy", "--target", "llamacpp:models/none.gguf",
                 "--optimizer", "scripted:toy-optimizer", "--out", str(tmp_path / "run")])
    said = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert "pip install 'stratune[local]'" in said
    assert not (tmp_path / "run").exists()  # refused before the run directory was made


def test_replay_advice_names_a_real_command(tmp_path, capsys):
    run = record_in_process(tmp_path / "run")
    store = CacheStore(run / "cache")
    store.delete(sorted(store.keys())[0])
    store.close()
    assert main(["replay", str(run)]) == 1
    said = " ".join(capsys.readouterr().out.split())
    assert "record it by running live: the same `stratune train` command" in said
