"""`stratune replay` checks a trace end to end: every alteration of a recorded run below is
detected, with one line that names the file or the event, and never "replay OK".

The trace is a toy run recorded with `--test-eval`, so it has every file a trace can have.
Exit 1 is "replay FAILED: ..." (the trace disagrees with its recomputation); exit 2 is a trace
that cannot be read at all (its manifest, its cache database).
"""

from __future__ import annotations

import csv
import gzip
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from llm_cache.batch_journal import BatchJournal
from llm_cache.store import CacheStore, StoredEntry, encode_entry
from replay.rundir import seal
from replay.rundir.trace import RunDir
from stratune_core.records.ids import text_id
from tests.support.cli import main, record_in_process
from tests.support.legacy import as_before_seals
from tests.support.toy import expected_answer

Alteration = Callable[[Path], None]


def _lines(run: Path) -> list[str]:
    return (run / "events.jsonl").read_text(encoding="utf-8").splitlines()


def _write_lines(run: Path, lines: list[str]) -> None:
    (run / "events.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def _index(run: Path, kind: str, nth: int = 0) -> int:
    return [i for i, line in enumerate(_lines(run)) if f'"_type":"{kind}"' in line][nth]


def _edit_event(kind: str, change: Callable[[dict], None], nth: int = 0) -> Alteration:
    def alter(run: Path) -> None:
        lines = _lines(run)
        i = _index(run, kind, nth)
        data = json.loads(lines[i])
        change(data)
        lines[i] = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        _write_lines(run, lines)
    return alter


def _lines_op(op: Callable[[list[str]], list[str]]) -> Alteration:
    return lambda run: _write_lines(run, op(_lines(run)))


def _json_file(name: str, change: Callable[[dict], None]) -> Alteration:
    def alter(run: Path) -> None:
        data = json.loads((run / name).read_text())
        change(data)
        (run / name).write_text(json.dumps(data, indent=2))
    return alter


def _blob_ids(run: Path) -> list[str]:
    return sorted(p.name.removesuffix(".txt.gz") for p in (run / "blobs").iterdir())


def _blob_text(run: Path, blob_id: str) -> str:
    return gzip.decompress((run / "blobs" / f"{blob_id}.txt.gz").read_bytes()).decode()


def _rewrite_blob(change: Callable[[Path, str], str]) -> Alteration:
    def alter(run: Path) -> None:
        victim = _blob_ids(run)[-1]
        text = change(run, victim)
        (run / "blobs" / f"{victim}.txt.gz").write_bytes(gzip.compress(text.encode()))
    return alter


def _first_event_line_reformatted(run: Path) -> None:
    lines = _lines(run)
    lines[0] = json.dumps(json.loads(lines[0]), indent=None)  # ", " and ": ", key order kept
    _write_lines(run, lines)


def _cache_entry(change: Callable[[CacheStore, str], None]) -> Alteration:
    def alter(run: Path) -> None:
        store = CacheStore(run / "cache")
        key = sorted(store.keys())[0]
        change(store, key)
        store.close()
    return alter


def _right_answer(entry: object) -> bool:
    if not isinstance(entry, StoredEntry):
        return False
    found = re.search(r"Word: (\S+) \[(\w)\]", entry.canonical)
    # A training execution's (test words carry a 4-digit index): the events depend on it.
    return found is not None and not re.search(r"\d{4}$", found.group(1)) and (
        f"<answer>{expected_answer(found.group(1), found.group(2))}</answer>" == entry.response.text)


def _answer_changed(store: CacheStore, _key: str) -> None:
    """A right answer of the target replaced by a wrong one, stored with a valid checksum. (An
    edit that changes nothing the run computes from an answer leaves every event as it was.)"""
    key, entry = next((k, e) for k, e in sorted(store.entries(), key=lambda ke: ke[0])
                      if _right_answer(e))
    assert isinstance(entry, StoredEntry)
    wrong = attrs.evolve(entry.response, text="<answer>wrong</answer>")
    store.raw.set(key, encode_entry(attrs.evolve(entry, response=wrong)))


def _cache_header_damaged(run: Path) -> None:
    db = run / "cache" / "cache.db"
    data = bytearray(db.read_bytes())
    data[:16] = b"not a database!!"
    db.write_bytes(bytes(data))


def _extra_blob(run: Path) -> None:
    text = "A skill nobody wrote."
    (run / "blobs" / f"{text_id(text)}.txt.gz").write_bytes(gzip.compress(text.encode()))


def _other_blob_named(run: Path) -> None:
    ids = _blob_ids(run)
    shutil.copy(run / "blobs" / f"{ids[0]}.txt.gz", run / "blobs" / f"{ids[1]}.txt.gz")


def _bump(key: str, by: int = 1) -> Callable[[dict], None]:
    return lambda d: d.__setitem__(key, d[key] + by)


def _bump_score(d: dict) -> None:
    first = sorted(d["scores"])[0]
    d["scores"][first] += 0.01


def _bump_usage(field: str) -> Callable[[dict], None]:
    def change(d: dict) -> None:
        row = next(r for r in d["rows"] if r["kind"] == "target_execution")
        if field == "calls":
            row["calls"] += 1
        else:
            row["usage"]["output_tokens"] += 7
    return change


ALTERATIONS: dict[str, tuple[Alteration, str]] = {
    # events.jsonl
    "event value": (_edit_event("BatchExecuted", _bump("solved")), "differs in solved"),
    "event reformatted": (_first_event_line_reformatted, "formatting only"),
    "event deleted": (_lines_op(lambda ls: ls[:5] + ls[6:]), "event 6"),
    "event duplicated": (_lines_op(lambda ls: ls[:5] + ls[4:]), "event 6"),
    "events swapped": (_lines_op(lambda ls: ls[:3] + [ls[4], ls[3]] + ls[5:]), "event 4"),
    "last event dropped": (_lines_op(lambda ls: ls[:-1]), "trace ends after"),
    "event appended": (_lines_op(lambda ls: [*ls, ls[-1]]), "extra in"),
    "garbage line appended": (_lines_op(lambda ls: [*ls, "not json"]), "extra in"),
    "line not JSON": (_lines_op(lambda ls: ls[:2] + ["{oops"] + ls[3:]), "not JSON"),
    "event type changed": (_edit_event("RoundStarted", lambda d: d.__setitem__(
        "_type", "RoundSkipped")), "RoundSkipped event there"),
    "field removed": (_edit_event("OperatorChosen", lambda d: d.pop("why")), "why: recorded (absent)"),
    "field added": (_edit_event("OperatorChosen", lambda d: d.__setitem__("note", 1)), "note"),
    "skill id swapped": (_edit_event("SkillAdded", lambda d: d.__setitem__(
        "text_blob", "0" * 16)), "text_blob"),
    "events emptied": (_lines_op(lambda ls: []), "trace ends after 0 events"),
    "byte not UTF-8": (lambda run: (run / "events.jsonl").write_bytes(
        (run / "events.jsonl").read_bytes().replace(b"toy", b"t\xffy", 1)), "not UTF-8"),
    # blobs/
    "blob text edited": (_rewrite_blob(lambda run, b: _blob_text(run, b) + "\nAlso: be nice."),
                         "does not hash to its name"),
    "blob replaced by another": (_other_blob_named, "does not hash to its name"),
    "blob deleted": (lambda run: (run / "blobs" / f"{_blob_ids(run)[-1]}.txt.gz").unlink(),
                     "missing"),
    "blob bytes truncated": (lambda run: (p := run / "blobs" / f"{_blob_ids(run)[0]}.txt.gz")
                             .write_bytes(p.read_bytes()[:-9]), "blobs/"),
    "junk file in blobs": (lambda run: (run / "blobs" / "notes.txt").write_text("hi"),
                           "not a skill blob"),
    "unreferenced blob added": (_extra_blob, "never adds"),
    # final_skill.txt
    "final skill edited": (lambda run: (run / "final_skill.txt").write_text(
        (run / "final_skill.txt").read_text() + "\nBe brief."), "final_skill.txt: differs"),
    "final skill deleted": (lambda run: (run / "final_skill.txt").unlink(), "final_skill.txt"),
    "final skill = initial": (lambda run: (run / "final_skill.txt").write_text(
        _blob_text(run, json.loads(_lines(run)[0])["initial_skill_id"])), "final_skill.txt"),
    # manifest.json
    "digest changed": (_json_file("manifest.json", lambda d: d.__setitem__(
        "event_digest", "0" * 32)), "manifest.json: records"),
    "event count changed": (_json_file("manifest.json", _bump("events")), "manifest.json"),
    "final id changed": (_json_file("manifest.json", lambda d: d.__setitem__(
        "final_id", "0" * 16)), "final_id"),
    "config changed": (_json_file("manifest.json", lambda d: d["config"].__setitem__(
        "seed", 99)), "event"),
    "marked unfinished": (_json_file("manifest.json", lambda d: d.__setitem__(
        "finished", False)), "did not finish"),
    "manifest not JSON": (lambda run: (run / "manifest.json").write_text("{"), "not JSON"),
    # usage.json and evaluation.json
    "usage calls changed": (_json_file("usage.json", _bump_usage("calls")), "usage.json"),
    "usage tokens changed": (_json_file("usage.json", _bump_usage("tokens")), "usage.json"),
    "usage deleted": (lambda run: (run / "usage.json").unlink(), "usage.json: missing"),
    "test score changed": (_json_file("evaluation.json", _bump_score), "evaluation.json"),
    "test n changed": (_json_file("evaluation.json", _bump("n")), "evaluation.json"),
    # cache/
    "cached call deleted": (_cache_entry(lambda store, key: store.delete(key)), "not in"),
    "cached answer edited": (_cache_entry(_answer_changed), "event"),
    "cached entry damaged": (_cache_entry(lambda store, key: store.raw.set(key, "x\n{}")),
                             "checksum"),
    "cache header damaged": (_cache_header_damaged, "cache.db: not a readable"),
    # what the recomputation cannot see, under the seal recorded when the run finished
    "manifest target edited": (_json_file("manifest.json", lambda d: d.__setitem__(
        "target", "scripted:toy-optimizer")), "manifest.json: target"),
    "manifest optimizer edited": (_json_file("manifest.json", lambda d: d.__setitem__(
        "optimizer", "scripted:toy-target")), "manifest.json: optimizer"),
    "manifest target options edited": (_json_file("manifest.json", lambda d: d.__setitem__(
        "target", "scripted:toy-target?batch=on")), "manifest.json: edited"),
    "manifest profile edited": (_json_file("manifest.json", lambda d: d.__setitem__(
        "profile", "released")), "manifest.json: edited"),
    "manifest seed edited alone": (_json_file("manifest.json", _bump("seed")),
                                   "manifest.json: edited"),
    "git revision edited": (_json_file("manifest.json", lambda d: d.__setitem__(
        "git_revision", "0" * 40)), "manifest.json: edited"),
    "package version edited": (_json_file("manifest.json", lambda d: d["packages"][0].__setitem__(
        "version", "0.0.1")), "manifest.json: edited"),
    "config delta edited, same events": (_json_file("manifest.json", lambda d: d[
        "config"].__setitem__("delta", d["config"]["delta"] + 1e-12)), "manifest.json: edited"),
    "seal removed": (_json_file("manifest.json", lambda d: d.__setitem__("seal", None)),
                     "not sealed"),
    "seal key deleted": (_json_file("manifest.json", lambda d: d.pop("seal")), "not sealed"),
    "seal's skill folder entry deleted": (_json_file("manifest.json", lambda d: d[
        "seal"].pop("skill_folder")), "the seal was edited"),
    "seal digest edited": (_json_file("manifest.json", lambda d: d["seal"].__setitem__(
        "manifest", "0" * 32)), "manifest.json: edited"),
    "usage cost edited": (_json_file("usage.json", lambda d: d["total"].__setitem__(
        "cost", 123.0)), "usage.json: edited"),
    "usage reformatted": (_json_file("usage.json", lambda d: None), "usage.json: edited"),
    "test solved count edited": (_json_file("evaluation.json", lambda d: d["solved"].__setitem__(
        sorted(d["solved"])[0], d["solved"][sorted(d["solved"])[0]] + 1)), "solved count"),
    "evaluation key added": (_json_file("evaluation.json", lambda d: d.__setitem__(
        "note", "x")), "evaluation.json: edited"),
    "evaluation deleted": (lambda run: (run / "evaluation.json").unlink(),
                           "test_evaluation calls"),
    "partial line appended": (lambda run: (run / "events.jsonl").open("ab").write(b'{"_type":'),
                              "bytes after the last complete line"),
    "line ends CR LF": (lambda run: (run / "events.jsonl").write_bytes(
        (run / "events.jsonl").read_bytes().replace(b"\n", b"\r\n")), "CR LF"),
    "line ends CR": (lambda run: (run / "events.jsonl").write_bytes(
        (run / "events.jsonl").read_bytes().replace(b"\n", b"\r")), "CR LF"),
    "batch journal deleted": (lambda run: (run / "batches.jsonl").unlink(),
                              "batches.jsonl: missing"),
    "batch journal edited": (lambda run: (run / "batches.jsonl").write_text(
        (run / "batches.jsonl").read_text().replace("msgbatch_1", "msgbatch_2")),
        "batches.jsonl: edited"),
    "batch journal appended": (lambda run: (run / "batches.jsonl").open("a").write(
        '{"event": "collected", "batch_id": "msgbatch_9"}\n'), "batches.jsonl: edited"),
    "grid coordinates edited": (_json_file("grid_cell.json", lambda d: d.__setitem__(
        "ablation", "i1-only")), "grid_cell.json: edited"),
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """With a batch journal and grid coordinates, as `?batch=on` and `stratune grid` leave them
    (written before the run is sealed, so the seal covers them)."""
    run = record_in_process(tmp_path_factory.mktemp("trace") / "run", test_split="test")
    journal = BatchJournal(run / "batches.jsonl")
    journal.submitted("msgbatch_1", "anthropic:claude-haiku-4-5", ["k1", "k2"])
    journal.collected("msgbatch_1")
    (run / "grid_cell.json").write_text(json.dumps({"ablation": "full", "id": "toy/p/full/seed0",
                                                    "pair": "p", "seed": 0, "task": "toy"}))
    seal.seal_finished(RunDir.at(run))
    return run


def _replay(run: Path, capsys) -> tuple[int, str]:
    code = main(["replay", str(run)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_the_unaltered_trace_replays(recorded, capsys):
    code, said = _replay(recorded, capsys)
    assert code == 0 and "replay OK" in said, said


@pytest.mark.parametrize("name", sorted(ALTERATIONS))
def test_each_alteration_is_detected_in_one_line(recorded, tmp_path, capsys, name):
    alter, named = ALTERATIONS[name]
    run = tmp_path / "altered"
    shutil.copytree(recorded, run)
    alter(run)
    code, said = _replay(run, capsys)
    assert code in (1, 2) and "replay OK" not in said, f"{name}: not detected: {said}"
    assert said.count("\n") == 1 and "Traceback" not in said, said
    assert said.startswith("replay FAILED: " if code == 1 else "error: "), said
    assert named in said, f"{name}: {named!r} not named in: {said}"


def test_alteration_count():
    """The closing note's figure: alterations tried (each is detected by the test above)."""
    tried = len(ALTERATIONS) + len(PUT_THERE)
    assert tried >= 64
    print(f"trace alterations tried: {tried}")


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> Path:
    """A sealed run with neither a batch journal nor grid coordinates."""
    return record_in_process(tmp_path_factory.mktemp("plain") / "run")


PUT_THERE = ("batches.jsonl", "grid_cell.json", "evaluation.json")  # after the run was sealed


@pytest.mark.parametrize("name", PUT_THERE)
def test_a_file_put_there_after_the_run_is_detected(plain, tmp_path, capsys, name):
    run = tmp_path / "altered"
    shutil.copytree(plain, run)
    (run / name).write_text("{}\n")
    code, said = _replay(run, capsys)
    assert code == 1 and "replay OK" not in said, said
    assert f"{name}: " in said and said.count("\n") == 1, said


def test_view_and_compare_mark_each_run_by_its_seal(recorded, plain, tmp_path, capsys):
    altered = tmp_path / "altered"
    shutil.copytree(recorded, altered)
    _json_file("usage.json", lambda d: d["total"].__setitem__("cost", 123.0))(altered)
    assert main(["view", str(altered)]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "check FAILED:" in shown and "usage.json" in shown and "edited after the run" in shown
    assert main(["view", str(plain)]) == 0
    assert "files match the seal" in " ".join(capsys.readouterr().out.split())
    # a run recorded before seals: the demo trace as the versions before seals wrote it (its
    # events in their shape of then, else they show a sealing version made it)
    legacy = tmp_path / "legacy"
    shutil.copytree(Path(__file__).resolve().parents[1] / "traces" / "demo", legacy)
    as_before_seals(legacy)
    assert main(["compare", str(altered), str(plain), str(legacy), "--table", "runs",
                 "--format", "csv"]) == 0
    header, *rows = csv.reader(capsys.readouterr().out.splitlines()[1:])
    assert header[-1] == "Check"
    marks = {row[header.index("Run")]: row[-1] for row in rows}
    # (the altered copy carries grid coordinates: compare names it by its cell id)
    assert marks == {"toy/p/full/seed0": "ALTERED", str(plain): "sealed", str(legacy): "unchecked"}
