"""`stratune replay`: recompute a recorded run strictly offline and check the whole trace against
it. Besides the event log (line by line, then the digest), each stored file is checked; each
check returns None, or one line naming the first mismatch:

- blobs/: every file is `<id>.txt.gz`, decompresses, and its text hashes to `<id>`; every skill
  the recomputed run added is there;
- final_skill.txt and the manifest's final id equal the recomputed run's final skill;
- usage.json: calls and tokens per call kind and model equal the recomputed run's (which call
  was paid and which came from the cache depends on the recording's history and is not checked);
- evaluation.json: the test scores and solved counts, recomputed from the cache;
- events.jsonl's bytes: LF line ends and no partial line; the manifest's model specs name the
  models of the recorded calls;
- everything else the seal recorded when the run finished (`replay/seal.py`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
from rich.console import Console
from rich.markup import escape

from llm_cache.accounting import Accounting
from llm_cache.client import CachedLLM
from llm_cache.errors import LLMError
from llm_cache.modes import Mode
from llm_cache.reader import CacheReader
from llm_cache.records import CallKind, Request, Response
from llm_cache.store import CacheNotFound
from replay import models, seal
from replay.evaluate import score_skill
from replay.redact import scrub
from replay.serde import Manifest, TraceError, check_prompt_version, digest_of, event_to_line
from replay.trace import RunDir
from stratune_core.config import Config
from stratune_core.events import RunFinished, SkillAdded
from stratune_core.run import iterate
from stratune_core.task import Task

BLOB_SUFFIX = ".txt.gz"
EXIT_OK = 0
EXIT_FAILED = 1


def stored_blobs(run_dir: RunDir) -> str | None:
    if not run_dir.blobs.is_dir():
        return f"{run_dir.blobs}: missing; the trace carries no skill texts"
    for path in sorted(run_dir.blobs.iterdir()):
        if not path.name.endswith(BLOB_SUFFIX):
            return f"{path}: not a skill blob (expected <id>{BLOB_SUFFIX}); remove it"
        try:
            run_dir.read_blob(path.name.removesuffix(BLOB_SUFFIX))
        except TraceError as exc:
            return str(exc)
    return None


def added_blobs(run_dir: RunDir, skill_ids: Iterable[str]) -> str | None:
    """Each skill the run added has its blob, and every blob is a skill of the run."""
    wanted = set(skill_ids)
    for skill_id in sorted(wanted):
        if not run_dir.blob(skill_id).is_file():
            return f"{run_dir.blob(skill_id)}: missing; the recomputed run adds skill {skill_id}"
    for path in sorted(run_dir.blobs.iterdir()):
        if path.name.removesuffix(BLOB_SUFFIX) not in wanted:
            return f"{path}: a skill text the recomputed run never adds; it was put there"
    return None


def final_skill(run_dir: RunDir, manifest: Manifest, final_id: str, text: str) -> str | None:
    if manifest.final_id != final_id:
        return (f"{run_dir.manifest}: final_id {manifest.final_id} but the recomputed run ends "
                f"with skill {final_id}")
    path = run_dir.final_skill
    try:
        stored = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return f"{path}: missing; the recomputed final skill is {final_id}"
    except UnicodeDecodeError:
        return f"{path}: not UTF-8; it was edited"
    if stored != text:
        line = _first_different_line(stored, text)
        return (f"{path}: differs from the recomputed final skill {final_id} at line {line} "
                "(the file was edited)")
    return None


def _first_different_line(a: str, b: str) -> int:
    left, right = a.split("\n"), b.split("\n")
    for i, (x, y) in enumerate(zip(left, right, strict=False), start=1):
        if x != y:
            return i
    return min(len(left), len(right)) + 1


def usage(run_dir: RunDir, recomputed: Accounting) -> str | None:
    recorded = _read(run_dir, run_dir.usage)
    if recorded is None:
        return f"{run_dir.usage}: missing; a finished run records its usage"
    try:
        rows = {(row["kind"], row["model"]): row for row in recorded["rows"]}
        totals = {key: (int(row["calls"]), _tokens(row["usage"]) + _tokens(row["cached_usage"]))
                  for key, row in rows.items()}
    except (KeyError, TypeError, ValueError, AttributeError):
        return f"{run_dir.usage}: not the usage table stratune writes; it was edited"
    wanted: dict[tuple[str, str], tuple[int, int]] = {}
    for row in recomputed.rows:
        assert row.kind is not None
        if row.kind is CallKind.TEST_EVALUATION and not any(
                kind == row.kind.value for kind, _ in totals):
            continue  # recorded before test-split calls were counted in usage.json
        wanted[(row.kind.value, row.model)] = (row.calls, row.usage.total + row.cached_usage.total)
    for key in sorted(set(wanted) | set(totals)):
        got, want = totals.get(key, (0, 0)), wanted.get(key, (0, 0))
        if got != want:
            return (f"{run_dir.usage}: {key[0]} calls to {key[1]}: recorded {got[0]} calls, "
                    f"{got[1]} tokens; recomputed {want[0]} calls, {want[1]} tokens")
    return None


def _tokens(usage: Mapping[str, Any]) -> int:
    return sum(int(usage[k]) for k in ("input_tokens", "output_tokens", "cache_read_tokens",
                                       "cache_write_tokens"))


def evaluation(run_dir: RunDir, scores: Mapping[str, float], n: int,
               solved: Mapping[str, int] | None = None) -> str | None:
    recorded = _read(run_dir, run_dir.evaluation)
    if recorded is None:
        return None
    try:
        stored = {str(k): float(v) for k, v in recorded["scores"].items()}
        stored_n = int(recorded["n"])
        stored_solved = ({str(k): int(v) for k, v in recorded["solved"].items()}
                         if "solved" in recorded else None)
    except (KeyError, TypeError, ValueError, AttributeError):
        return f"{run_dir.evaluation}: not the evaluation stratune writes; it was edited"
    if stored_n != n:
        return f"{run_dir.evaluation}: n is {stored_n}, the split has {n} samples"
    for skill_id in sorted(set(stored) | set(scores)):
        if stored.get(skill_id) != scores.get(skill_id):
            return (f"{run_dir.evaluation}: score of {skill_id}: recorded "
                    f"{stored.get(skill_id)}, recomputed {scores.get(skill_id)}")
    if solved is not None and stored_solved is not None:  # older files have no solved counts
        for skill_id in sorted(set(stored_solved) | set(solved)):
            if stored_solved.get(skill_id) != solved.get(skill_id):
                return (f"{run_dir.evaluation}: solved count of {skill_id}: recorded "
                        f"{stored_solved.get(skill_id)}, recomputed {solved.get(skill_id)}")
    return None


def event_bytes(run_dir: RunDir) -> str | None:
    """A finished run's log is its canonical lines, each ending in LF, and nothing else."""
    data = run_dir.events.read_bytes() if run_dir.events.is_file() else b""
    if b"\r" in data:  # canonical JSON escapes a CR inside a string: a raw one was added
        line = data.count(b"\n", 0, data.index(b"\r")) + 1
        return (f"{run_dir.events}:{line}: line ends converted to CR LF (or CR); the log is "
                "written with LF alone: check it out again without conversion (git: "
                "core.autocrlf false, or `*.jsonl -text` in .gitattributes)")
    tail = len(data) - (data.rfind(b"\n") + 1)
    if tail:
        return (f"{run_dir.events}: {tail} bytes after the last complete line; a finished "
                "run's log ends with a whole line (a partial line was appended)")
    return None


def model_specs(run_dir: RunDir, manifest: Manifest) -> str | None:
    """The manifest's model specs name the models every recorded call was made to."""
    for role, spec, model in (("target", manifest.target, manifest.config.target_model),
                              ("optimizer", manifest.optimizer, manifest.config.optimizer_model)):
        named = models.canonical_model(spec)
        if named != model:
            return (f"{run_dir.manifest}: {role} {spec!r} is model {named}, but the run's calls "
                    f"went to {model} (the manifest was edited)")
    return None


def _read(run_dir: RunDir, path: Any) -> Any:
    try:
        return run_dir.read_json(path)
    except (TraceError, UnicodeDecodeError):
        return {}


# ---- the event log ----------------------------------------------------------------------------


def difference(n: int, recorded: list[str], line: str) -> str:
    """Event `n` (1-based) of the recomputed run, `line`, against the recorded log."""
    new = json.loads(line)
    head = f"event {n} ({new.get('_type')}" + (f", round {new['round']})" if "round" in new else ")")
    if n > len(recorded):
        return f"{head} was recomputed but the trace ends after {len(recorded)} events"
    try:
        old = json.loads(recorded[n - 1])
    except json.JSONDecodeError:
        return f"{head}: the recorded line is not JSON (the trace was edited)"
    if old == new:
        return (f"{head}: formatting only: the recorded line holds the same values in another "
                "spelling; the digest covers the canonical bytes (the trace was edited)")
    if not isinstance(old, dict):
        return f"{head}: the recorded line is not a JSON object (the trace was edited)"
    if old.get("_type") != new.get("_type"):
        return f"{head}: the trace has a {old.get('_type')} event there"
    fields = sorted(k for k in set(old) | set(new)
                    if (k in old) != (k in new) or old.get(k) != new.get(k))
    shown = "; ".join(f"{k}: recorded {_short(old, k)}, recomputed {_short(new, k)}"
                      for k in fields[:3])
    return f"{head} differs in {shown}"


def _short(data: Mapping[str, object], key: str) -> str:
    if key not in data:
        return "(absent)"
    text = json.dumps(data[key], ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


class Labelled:
    """The same requests (the same cache keys: the kind is not part of the key), counted in
    usage under their own call kind."""

    def __init__(self, llm: CachedLLM, kind: CallKind) -> None:
        self._llm, self._kind = llm, kind

    def complete(self, requests: Sequence[Request]) -> tuple[Response, ...]:
        return self._llm.complete([attrs.evolve(r, kind=self._kind) for r in requests])


# ---- the replay -------------------------------------------------------------------------------


def replay(path: str, console: Console) -> int:
    """Exit 0 only when the recomputed run equals the trace: every event line, the digest, the
    skill blobs, the final skill, usage.json and evaluation.json."""
    run_dir = RunDir.at(path)
    manifest = run_dir.read_manifest()
    check_prompt_version(manifest, where=str(run_dir.manifest))
    if not manifest.finished:
        raise TraceError(f"{run_dir.manifest}: the run did not finish; resume it with "
                         "`stratune train` (same command) before replaying")
    recorded = run_dir.read_lines()
    problem = event_bytes(run_dir) or stored_blobs(run_dir) or model_specs(run_dir, manifest)
    if problem is not None:
        return failed(console, problem)
    task = models.load_task(manifest.task)
    with replay_llm(run_dir) as llm:
        n, added, final = 0, [], None
        try:
            for state, events in iterate(manifest.config, task, llm):
                for event in events:
                    line = event_to_line(event)
                    n += 1
                    if n > len(recorded) or recorded[n - 1] != line:
                        return failed(console, difference(n, recorded, line))
                    if isinstance(event, SkillAdded):
                        added.append(event.skill_id)
                    if isinstance(event, RunFinished):
                        final = (event.final_id, state.text(event.final_id))
            if n != len(recorded):
                return failed(console, f"the recomputed run has {n} events, the trace "
                               f"{len(recorded)}; event {n + 1} onwards is extra in "
                               f"{run_dir.events}")
            assert final is not None
            problem = (added_blobs(run_dir, added)
                       or final_skill(run_dir, manifest, *final)
                       or _evaluation(run_dir, task, llm, manifest.config, final[0]))
            problem = problem or usage(run_dir, llm.accounting())
        except LLMError as exc:
            return failed(console, f"at event {n + 1}: {scrub(str(exc))}")
    if problem is not None:
        return failed(console, problem)
    digest = digest_of(recorded)
    if digest != manifest.event_digest or manifest.events != n:
        return failed(console, f"{run_dir.manifest}: records {manifest.events} events with "
                       f"digest {manifest.event_digest}; the events are {n} and hash to {digest}")
    problem = seal.check(run_dir)
    if problem is not None:
        return failed(console, problem)
    note = ("; every other file matches the run's seal" if manifest.seal is not None else
            "; recorded before runs were sealed: the manifest's other fields and usage.json's "
            "costs are not covered")
    console.print(f"[green]replay OK[/]: {n} events recomputed offline; digest {digest} "
                  f"matches{note}", soft_wrap=True)
    return EXIT_OK


def _evaluation(run_dir: RunDir, task: Task, llm: CachedLLM, config: Config,
                final_id: str) -> str | None:
    """Recompute evaluation.json's scores from the cache, when the trace has one."""
    try:
        recorded = run_dir.read_json(run_dir.evaluation)
    except TraceError as exc:
        return str(exc)
    if not isinstance(recorded, dict) or not isinstance(recorded.get("scores"), dict):
        return None if recorded is None else f"{run_dir.evaluation}: not the evaluation " \
            "stratune writes; it was edited"
    split = str(recorded.get("split", "test"))
    counted = Labelled(llm, CallKind.TEST_EVALUATION)
    scores, solved, n = {}, {}, 0
    for skill_id in recorded["scores"]:
        try:
            text = run_dir.read_blob(str(skill_id))
        except TraceError as exc:
            return f"{run_dir.evaluation}: {exc}"
        result = score_skill(task, text, counted, config.target_model, split=split)
        scores[str(skill_id)], solved[str(skill_id)], n = result.mean, result.solved, result.n
    if final_id not in scores:
        return f"{run_dir.evaluation}: holds no score for the final skill {final_id}"
    return evaluation(run_dir, scores, n, solved)


def replay_llm(run_dir: RunDir) -> CachedLLM:
    """The directory's own cache, read-only, in strict replay mode: a miss is an error."""
    try:
        store = CacheReader(run_dir.cache)
    except CacheNotFound:
        raise TraceError(f"{run_dir.cache}: missing; the directory carries no model-call "
                         "cache") from None
    return CachedLLM(store, backends={}, mode=Mode.REPLAY)


def failed(console: Console, message: str) -> int:
    console.print(f"[red]replay FAILED[/]: {escape(message)}", soft_wrap=True)
    return EXIT_FAILED
