"""`stratune replay`: recompute a recorded run strictly offline and check the whole trace against
it. Besides the event log (line by line, then the digest), each stored file is checked
(`replay/run/file_checks.py`); each check returns None, or one line naming the first mismatch:

- blobs/: every file is `<id>.txt.gz`, decompresses, and its text hashes to `<id>`; every skill
  the recomputed run added is there;
- final_skill.txt and the manifest's final id equal the recomputed run's final skill;
- usage.json: calls and tokens per call kind and model equal the recomputed run's (which call
  was paid and which came from the cache depends on the recording's history and is not checked);
- evaluation.json: the test scores and solved counts, recomputed from the cache;
- events.jsonl's bytes: LF line ends and no partial line; the manifest's model specs name the
  models of the recorded calls;
- everything else the seal recorded when the run finished (`replay/rundir/seal.py`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import attrs
from rich.console import Console
from rich.markup import escape

from llm_cache.backends.base import Backend
from llm_cache.client import CachedLLM
from llm_cache.errors import LLMError
from llm_cache.modes import Mode
from llm_cache.reader import CacheReader
from llm_cache.records import CallKind, Request, Response, Role
from llm_cache.store import CacheNotFound
from replay.evaluate.scoring import score_skill
from replay.models import specs as models
from replay.models.redact import scrub
from replay.run.file_checks import (
    added_blobs,
    evaluation,
    event_bytes,
    final_skill,
    model_specs,
    stored_blobs,
    usage,
)
from replay.run.package_drift import drift_notes
from replay.rundir import seal
from replay.rundir.serde import TraceError, check_prompt_version, digest_of, event_to_line
from replay.rundir.trace import RunDir
from replay.skills.agent_skill import OUT_DIR as SKILL_OUT
from replay.skills.skill_parts import check_learned
from replay.tools.backend import ToolBackend
from replay.tools.toolset import rechecking
from stratune_core.config.knobs import Config
from stratune_core.records.task import Task
from stratune_core.round.registry import iterate_method
from stratune_core.state.events import RunFinished, SkillAdded

EXIT_OK = 0
EXIT_FAILED = 1


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
        # a tool call keeps its own kind: tool time is counted apart from the model's tokens
        return self._llm.complete([r if r.kind is CallKind.TOOL_CALL
                                   else attrs.evolve(r, kind=self._kind) for r in requests])


# ---- the replay -------------------------------------------------------------------------------


def replay(path: str, console: Console) -> int:
    """Exit 0 only when the recomputed run equals the trace: every event line, the digest, the
    skill blobs, the final skill, usage.json and evaluation.json."""
    run_dir = RunDir.at(path)
    manifest = run_dir.read_manifest()
    check_prompt_version(manifest, where=str(run_dir.manifest))
    for note in drift_notes(manifest):  # before the replay, so that a failure reads after it
        console.print(f"[yellow]note[/]: {escape(note)}", soft_wrap=True)
    if not manifest.finished:
        raise TraceError(f"{run_dir.manifest}: the run did not finish; resume it with "
                         "`stratune train` (same command) before replaying")
    recorded = run_dir.read_lines()
    problem = event_bytes(run_dir) or stored_blobs(run_dir) or model_specs(run_dir, manifest)
    if problem is not None:
        return failed(console, problem)
    task = models.load_task(manifest.task, toolbox=manifest.toolbox)
    rechecked: dict[Role, Backend] = {}
    if manifest.toolbox is not None:  # the pure tools' calls are recomputed and compared
        tools, notes = rechecking(manifest.task.tools, manifest.toolbox)
        for note in notes:
            console.print(f"[yellow]note[/]: {escape(note)}", soft_wrap=True)
        if tools:
            rechecked[Role.TOOL] = ToolBackend(tools)
    if manifest.task.kind is not None:  # a harness: each episode runs again, strictly offline
        rechecked[Role.TARGET] = models.build_backend(manifest.target)
    with replay_llm(run_dir, rechecked) as llm:
        n, added, final = 0, [], None
        try:
            for state, events in iterate_method(manifest.method, manifest.config, task, llm):
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
                       or check_learned(run_dir.path / SKILL_OUT, final[1],
                                        manifest.task.skill_parts)
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


def replay_llm(run_dir: RunDir, backends: Mapping[Role, Backend] | None = None) -> CachedLLM:
    """The directory's own cache, read-only, in strict replay mode: a miss is an error; only
    `backends` that recheck (a pure tool) are ever called."""
    try:
        store = CacheReader(run_dir.cache)
    except CacheNotFound:
        raise TraceError(f"{run_dir.cache}: missing; the directory carries no model-call "
                         "cache") from None
    return CachedLLM(store, backends=dict(backends or {}), mode=Mode.REPLAY)


def failed(console: Console, message: str) -> int:
    console.print(f"[red]replay FAILED[/]: {escape(message)}", soft_wrap=True)
    return EXIT_FAILED
