"""`stratune evaluate`: score skill files on a split, optionally against a baseline skill, and
optionally keep the result as an evaluation directory that `stratune replay` re-checks."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from attrs import frozen
from rich.console import Console
from rich.markup import escape

from llm_cache.accounting import AccountingRow
from llm_cache.backends.base import Backend
from llm_cache.client import CachedLLM
from llm_cache.records import Role
from replay.evaluate import directory as evaluation_dir
from replay.evaluate import flags as evaluate_flags
from replay.evaluate.scoring import score_with_bar
from replay.input_files import read_regular
from replay.models import specs as models
from replay.rundir.cache_owner import owner_locked
from replay.rundir.lock import RunLock
from replay.rundir.out_dir import check_out
from replay.rundir.serde import TaskSpec
from replay.rundir.trace import RunDir
from replay.skills.agent_skill import is_skill_folder, read_skill_folder
from replay.skills.skill_parts import folder_document
from stratune_core.records.errors import StraTuneError
from stratune_core.records.task import Task

INITIAL = evaluate_flags.INITIAL


def run(args: argparse.Namespace, task_spec: TaskSpec, cache_dir: str, console: Console) -> int:
    task = models.load_task(task_spec, data_dir=args.data_dir)
    kinds = args.skill_parts  # ordered and checked by the flag's type
    skills = [(args.skill, read_skill(Path(args.skill), "--skill", kinds))]
    if args.baseline is not None:
        text = task.info.initial_skill if args.baseline == INITIAL else \
            read_skill(Path(args.baseline), "--baseline", kinds)
        skills.insert(0, (args.baseline, text))
    done = score_skills(task, task_spec, skills, args.target, split=args.split,
                        cache_dir=cache_dir, out=args.out, concurrency=args.concurrency,
                        console=console, baseline=args.baseline)
    record, total = done.record, done.total
    paid = f"[{total.paid_calls} calls paid, {total.cache_hits} from cache]"
    if args.baseline is None:
        result, = record.skills
        console.print(f"{escape(task.info.name)} {args.split}: score {result.mean:.3f} "
                      f"({result.solved}/{record.n} solved) with {record.target_model} "
                      f"{escape(paid)}")
    else:
        console.print(evaluation_dir.table(record, task.info.success_threshold))
        console.print(escape(paid))
    if args.out is not None:
        console.print(f"written: {escape(str(Path(args.out) / evaluation_dir.SCORES))} "
                      f"(re-check offline: stratune replay {escape(args.out)})")
    return 0


@frozen(kw_only=True)
class Scored:
    record: evaluation_dir.EvaluationRecord
    total: AccountingRow  # this evaluation's calls: paid and from the cache


def score_skills(task: Task, task_spec: TaskSpec, skills: Sequence[tuple[str, str]],
                 target: str, *, split: str, cache_dir: str, out: str | None,
                 concurrency: int, console: Console, baseline: str | None = None) -> Scored:
    """Score each (label, text) on `split` through the cache (OUT's own with `out`, which then
    becomes an evaluation directory that `stratune replay` re-checks)."""
    resolved = models.resolve(target)  # once: the canonical id, the backend and its checks
    model = models.canonical_model(resolved)
    backend = models.build_backend(resolved)
    if out is None:
        # The cache may hold every answer (re-scoring a run): the backend needs a local model's
        # library and file only at its first miss.
        if Path(cache_dir).exists() and not Path(cache_dir).is_dir():
            raise StraTuneError(f"--cache-dir {cache_dir}: is a file, not a directory; give "
                                "the cache directory (it is created if missing)")
        # a run's cache takes rows only under that run's lock
        with owner_locked(cache_dir, "evaluate --cache-dir"):
            return _score(task, task_spec, skills, backend, model, split=split,
                          cache_dir=cache_dir, concurrency=concurrency, console=console,
                          baseline=baseline)
    # OUT's cache starts empty, so every answer is a call: a local model's library and file are
    # checked before anything is written.
    models.check_buildable(resolved)
    out_dir = RunDir.at(out)
    check_out(out_dir.path, "evaluation")
    out_dir.prepare()
    # One writer per directory: a `train` on the same --out waits for nothing and is refused.
    with RunLock.acquire(out_dir.path, "evaluate"):
        if out_dir.exists():
            raise StraTuneError(f"--out {out_dir.path}: holds a training run; give another "
                                "directory for the evaluation")
        evaluation_dir.check_same(out_dir.path, evaluation_dir.Planned.of(
            task_spec, split, model, skills, baseline))
        scored = _score(task, task_spec, skills, backend, model, split=split,
                        cache_dir=str(out_dir.cache), concurrency=concurrency,
                        console=console, baseline=baseline)
        evaluation_dir.write(out, scored.record, [text for _, text in skills])
    return scored


def _score(task: Task, task_spec: TaskSpec, skills: Sequence[tuple[str, str]], backend: Backend,
           model: str, *, split: str, cache_dir: str, concurrency: int, console: Console,
           baseline: str | None) -> Scored:
    results = []
    with CachedLLM.open(cache_dir, backends={Role.TARGET: backend,
                                             **models.kind_backends(task_spec, task)}, mode="live",
                        concurrency=concurrency) as llm:
        for label, text in skills:
            result = score_with_bar(task, text, llm, model, console, split=split,
                                    label=f"evaluating {label}")
            results.append((label, text, result))
        total = llm.accounting().total()
    record = evaluation_dir.record_of(task_spec, split, model, results, baseline)
    return Scored(record=record, total=total)


def read_skill(path: Path, flag: str, kinds: Sequence[str] = ()) -> str:
    """A skill text file, or an Agent Skills folder (the body of its SKILL.md, with the parts
    `kinds` names beside it)."""
    if is_skill_folder(path):
        return folder_document(read_skill_folder(path), kinds)
    if kinds:
        raise StraTuneError(f"{flag} {path}: --skill-parts reads an Agent Skills folder; a text "
                            "file holds its parts already")
    if path.is_dir():
        raise StraTuneError(f"{flag} {path}: is a directory without SKILL.md; give the skill's "
                            "text file (e.g. RUN/final_skill.txt) or an Agent Skills folder")
    data = read_regular(path, flag)  # a FIFO or a device would block the read forever
    try:
        skill = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise StraTuneError(f"{flag} {path}:{line}: not UTF-8 text (byte "
                            f"0x{data[exc.start]:02x}); give a plain-text skill file") from None
    if "\x00" in skill or not skill.strip():
        raise StraTuneError(f"{flag} {path}: " + ("is empty" if not skill.strip() else
                            "holds NUL bytes, not text") + "; give a plain-text skill file")
    return skill
