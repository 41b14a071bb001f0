"""`stratune evaluate` re-scoring a run whose answers are all in the cache needs no local
backend: llama-cpp-python (and the GGUF file) are needed only at the first call the cache cannot
answer, and then the error is one line. With --out (a fresh cache, every answer a call) they are
still checked before anything is written."""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from replay.commands.app import main as stratune
from tests.support.cli import ROOT

TRACE = ROOT / "traces" / "demo-gepa"  # recorded with two local GGUF models


@pytest.fixture
def no_llama(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # as if the extra were not installed
    monkeypatch.chdir(tmp_path)  # where the trace's relative GGUF paths lead nowhere
    manifest = json.loads((TRACE / "manifest.json").read_text(encoding="utf-8"))
    task = manifest["task"]
    return ["evaluate", "--task", task["spec"], "--limit", str(task["limit"]), "--split", "test",
            "--skill", str(TRACE / "final_skill.txt"), "--baseline", "initial",
            "--target", manifest["target"]]


def test_all_answers_cached_needs_no_llama_cpp(no_llama, tmp_path, capsys):
    cache = shutil.copytree(TRACE / "cache", tmp_path / "cache")
    assert stratune([*no_llama, "--cache-dir", str(cache)]) == 0
    out = capsys.readouterr().out
    recorded = json.loads((TRACE / "evaluation.json").read_text(encoding="utf-8"))
    final = json.loads((TRACE / "events.jsonl").read_text().splitlines()[-1])["final_id"]
    assert f"{recorded['scores'][final]:.3f}" in out
    assert "0 calls paid, 96 from cache" in out


def test_a_miss_without_llama_cpp_is_one_line(no_llama, tmp_path, capsys):
    assert stratune([*no_llama, "--cache-dir", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err.strip()
    said = " ".join(err.split())  # one message, wrapped to the terminal's width
    assert err.count("error:") == 1
    # the first thing the miss needs that is missing: here the GGUF file, before the library
    assert ("does not exist; fix the model spec" in said
            or "pip install 'stratune[local]'" in said), said


def test_with_out_it_is_refused_before_anything_is_written(no_llama, tmp_path, capsys):
    assert stratune([*no_llama, "--out", str(tmp_path / "eval")]) == 2
    assert "llama-cpp-python" in capsys.readouterr().err
    assert not (tmp_path / "eval").exists()


def test_cache_dir_beside_out_is_refused_not_ignored(no_llama, tmp_path, capsys):
    # OUT keeps its own cache; a --cache-dir beside it would silently go unread and every
    # answer would be paid again
    cache = shutil.copytree(TRACE / "cache", tmp_path / "cache")
    rows = sorted(p.stat().st_size for p in cache.rglob("*") if p.is_file())
    code = stratune([*no_llama, "--cache-dir", str(cache), "--out", str(tmp_path / "eval")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "give --out or --cache-dir, not both" in err
    assert not (tmp_path / "eval").exists()
    assert sorted(p.stat().st_size for p in cache.rglob("*") if p.is_file()) == rows
