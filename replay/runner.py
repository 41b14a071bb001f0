"""`train` (record a run into its directory, resuming from the cache) and `replay` (re-execute a
recorded run strictly offline and check its events)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import attrs
from rich.console import Console

from llm_cache.client import CachedLLM
from llm_cache.errors import CacheMiss, LLMError
from llm_cache.gates import StopRequested
from replay import models
from replay.evaluate import score_with_bar
from replay.options import RunOptions, build_config, new_manifest, replay_sequence
from replay.plan import make_plan
from replay.progress import TrainProgress
from replay.serde import Manifest, TraceError, digest_of, event_to_line
from replay.trace import RunDir, TraceWriter
from replay.train_hooks import TrainHooks
from stratune_core.config import Config
from stratune_core.errors import StraTuneError
from stratune_core.events import RunFinished
from stratune_core.run import iterate
from stratune_core.task import Task

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_STOPPED = 3  # a stop control (--max-cost, --timeout, a STOP file) ended it; resumable
EXIT_INTERRUPTED = 130


def train(options: RunOptions, out: str | Path, console: Console, *, concurrency: int = 8,
          test_split: str | None = None, hooks: TrainHooks | None = None) -> int:
    """Record (or resume) a run in `out`; with `test_split`, score the initial and the final
    skill on that split afterwards (not counted in the budget) into evaluation.json."""
    hooks = hooks or TrainHooks()
    run_dir = RunDir.at(out)
    config = build_config(options)
    sequence = replay_sequence(config)
    manifest = new_manifest(options, config, sequence)
    if run_dir.exists():
        _check_same_run(run_dir, manifest)
    task = hooks.task if hooks.task is not None else models.load_task(options.task,
                                                                      data_dir=options.data_dir)
    warning = make_plan(config, task).warning
    if warning is not None:
        console.print(f"[bold yellow]warning[/]: {warning}")
    run_dir.path.mkdir(parents=True, exist_ok=True)
    run_dir.write_manifest(manifest)
    backends = hooks.backends or models.backends(options.target, options.optimizer)
    llm = CachedLLM.open(run_dir.cache, backends=backends, mode="live", concurrency=concurrency,
                         seed=config.seed, gate=hooks.gate)
    writer = TraceWriter(run_dir)
    progress = TrainProgress(console)
    final_id: str | None = None
    try:
        with progress:
            for state, events in iterate(config, task, llm, replay_sequence=sequence):
                writer.write(events)
                progress.update(state, events, llm.accounting())
                for event in events:
                    if isinstance(event, RunFinished):
                        final_id = event.final_id
                        run_dir.write_text(run_dir.final_skill, state.text(event.final_id))
                hooks.after_round(state, events, llm.accounting())
    except StopRequested as stop:
        writer.close()
        llm.close()
        console.print(f"[yellow]stopped[/]: {stop}")
        return EXIT_STOPPED
    except KeyboardInterrupt:
        writer.close()
        llm.close()
        console.print(f"[yellow]stopped[/]: {len(writer.lines)} events kept in {run_dir.events}; "
                      "run the same command again to resume from the cache")
        return EXIT_INTERRUPTED
    except LLMError as exc:
        writer.close()
        llm.close()
        console.print(f"[red]model call failed[/]: {exc}")
        console.print("events and paid calls so far are kept; run the same command to resume")
        return EXIT_FAILED
    except BaseException:
        writer.close()
        llm.close()
        raise
    writer.finish()
    run_dir.write_json(run_dir.usage, llm.accounting().to_dict())
    done = attrs.evolve(manifest, events=len(writer.lines), event_digest=writer.digest.hexdigest(),
                        finished=True, final_id=final_id)
    run_dir.write_manifest(done)
    console.print(writer.report.describe())
    try:
        if test_split is not None and final_id is not None:
            _evaluate_into(run_dir, task, llm, config, test_split, writer, final_id, console)
    except StopRequested as stop:
        console.print(f"[yellow]stopped[/] during the test evaluation: {stop}")
        return EXIT_STOPPED
    finally:
        llm.close()
        _checkpoint(run_dir.cache)
    return EXIT_OK


def _checkpoint(cache: Path) -> None:
    """Fold SQLite's write-ahead log into cache.db, so the file alone holds every call (a trace
    committed without its -wal file must still replay). Connections the cache opened in its
    worker thread may outlive `close()`; an idle connection does not block the checkpoint."""
    db = cache / "cache.db"
    if not db.is_file():
        return
    connection = sqlite3.connect(db)
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()


def _evaluate_into(run_dir: RunDir, task: Task, llm: CachedLLM, config: Config, split: str,
                   writer: TraceWriter, final_id: str, console: Console) -> None:
    texts = {}
    for line in writer.lines[:2]:  # RunStarted, then the initial skill's SkillAdded
        data = json.loads(line)
        if data.get("_type") == "SkillAdded":
            texts[data["skill_id"]] = run_dir.read_blob(data["skill_id"])
    texts[final_id] = run_dir.final_skill.read_text(encoding="utf-8")
    scores: dict[str, float] = {}
    solved: dict[str, int] = {}
    n = 0
    for skill_id, text in texts.items():
        result = score_with_bar(task, text, llm, config.target_model, console, split=split,
                                label=f"{split} {skill_id[:8]}")
        scores[skill_id], solved[skill_id], n = result.mean, result.solved, result.n
        console.print(f"{split} score of {skill_id[:8]}: {result.mean:.3f} "
                      f"({result.solved}/{result.n} solved)")
    run_dir.write_json(run_dir.evaluation, {"split": split, "n": n, "scores": scores,
                                            "solved": solved})


def _check_same_run(run_dir: RunDir, manifest: Manifest) -> None:
    recorded = run_dir.read_manifest().run_identity()
    wanted = manifest.run_identity()
    differing = sorted(k for k in wanted if recorded.get(k) != wanted[k])
    if differing:
        extra = ""
        if "config" in differing:
            fields = sorted(k for k in wanted["config"]
                            if recorded["config"].get(k) != wanted["config"][k])
            extra = f" (config fields: {', '.join(fields)})"
        raise StraTuneError(
            f"{run_dir.path} holds a different run: {', '.join(differing)} differ{extra}; "
            "repeat the original command to resume it, or choose another --out"
        )


@contextmanager
def _private_cache(run_dir: RunDir) -> Iterator[Path]:
    """A copy of the trace's cache, so replaying a committed trace leaves its files untouched."""
    if not run_dir.cache.is_dir():
        raise TraceError(f"{run_dir.cache}: missing; the trace carries no model-call cache")
    with tempfile.TemporaryDirectory(prefix="stratune-replay-") as tmp:
        copy = Path(tmp) / "cache"
        shutil.copytree(run_dir.cache, copy)
        yield copy


def replay(path: str | Path, console: Console) -> int:
    """Exit 0 only when the recomputed events equal the recorded ones, line for line."""
    run_dir = RunDir.at(path)
    manifest = run_dir.read_manifest()
    if not manifest.finished:
        raise TraceError(f"{run_dir.manifest}: the run did not finish; resume it with "
                         "`stratune train` (same command) before replaying")
    recorded = run_dir.read_lines()
    if digest_of(recorded) != manifest.event_digest or len(recorded) != manifest.events:
        console.print(f"[yellow]note[/]: {run_dir.events} does not match the manifest's digest; "
                      "recomputing to find the first differing event")
    task = models.load_task(manifest.task)
    n = 0
    with _private_cache(run_dir) as cache, CachedLLM.open(cache, backends={}, mode="replay") as llm:
        try:
            for _, events in iterate(manifest.config, task, llm,
                                     replay_sequence=manifest.replay_sequence):
                for event in events:
                    line = event_to_line(event)
                    n += 1
                    if n > len(recorded) or recorded[n - 1] != line:
                        console.print(f"[red]replay FAILED[/]: {_difference(n, recorded, line)}")
                        return EXIT_FAILED
        except CacheMiss as exc:
            console.print(f"[red]replay FAILED[/] at event {n + 1}: the recomputed run made a "
                          f"model call the trace's cache does not hold: {exc}")
            return EXIT_FAILED
    if n != len(recorded):
        console.print(f"[red]replay FAILED[/]: the recomputed run has {n} events, the trace "
                      f"{len(recorded)}; event {n + 1} onwards is extra in {run_dir.events}")
        return EXIT_FAILED
    digest = digest_of(recorded)
    if digest != manifest.event_digest:
        console.print(f"[red]replay FAILED[/]: events match but the manifest records digest "
                      f"{manifest.event_digest}, the events hash to {digest}")
        return EXIT_FAILED
    console.print(f"[green]replay OK[/]: {n} events recomputed offline; digest {digest} matches")
    return EXIT_OK


def _difference(n: int, recorded: list[str], line: str) -> str:
    new = json.loads(line)
    head = f"event {n} ({new.get('_type')}" + (f", round {new['round']})" if "round" in new else ")")
    if n > len(recorded):
        return f"{head} was recomputed but the trace ends after {len(recorded)} events"
    try:
        old = json.loads(recorded[n - 1])
    except json.JSONDecodeError:
        return f"{head}: the recorded line is not JSON (the trace was edited)"
    if old.get("_type") != new.get("_type"):
        return f"{head}: the trace has a {old.get('_type')} event there"
    fields = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    shown = "; ".join(f"{k}: recorded {_short(old.get(k))}, recomputed {_short(new.get(k))}"
                      for k in fields[:3])
    return f"{head} differs in {shown}"


def _short(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
