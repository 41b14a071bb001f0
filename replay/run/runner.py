"""`train` (record a run into its directory, resuming from the cache) and `replay` (re-execute a
recorded run strictly offline and check it end to end)."""

from __future__ import annotations

import contextlib
import itertools
import sqlite3
from collections.abc import Callable

import attrs
from rich.console import Console
from rich.markup import escape

from llm_cache.backends import Backend
from llm_cache.backends.context import context_tokens
from llm_cache.batch_journal import JOURNAL_NAME
from llm_cache.client import CachedLLM
from llm_cache.errors import LLMError
from llm_cache.gates import StopRequested
from llm_cache.records import CallKind, Role
from replay.evaluate import directory as evaluation_dir
from replay.evaluate.scoring import score_with_bar
from replay.models import specs as models
from replay.models.prompt_fit import fit_to_context
from replay.models.redact import public_spec, scrub
from replay.plan.estimate import make_plan
from replay.run import verify
from replay.run.hooks import TrainHooks
from replay.run.method_options import check_budget, fit_method
from replay.run.options import RunOptions, build_config, new_manifest, same_batches_warning
from replay.run.progress import TrainProgress
from replay.run.resume import checkpoint, previous_run
from replay.run.verify import EXIT_FAILED, EXIT_OK, Labelled
from replay.rundir import seal
from replay.rundir.lock import RunLock
from replay.rundir.out_dir import check_out
from replay.rundir.serde import Manifest
from replay.rundir.trace import SCORES, RunDir
from replay.rundir.writer import TraceWriter
from replay.skills.skill_parts import write_learned
from stratune_core.config.knobs import Config
from stratune_core.records.errors import StraTuneError
from stratune_core.records.task import Task
from stratune_core.round.registry import entry_of, iterate_method
from stratune_core.state.events import RunFinished, SkillAdded
from stratune_core.state.state import initial_state

EXIT_STOPPED = 3  # a stop control (--max-cost, --timeout, a STOP file) ended it; resumable
EXIT_INTERRUPTED = 130


def train(options: RunOptions, out: str, console: Console, *, concurrency: int = 8,
          test_split: str | None = None, hooks: TrainHooks | None = None,
          on_ready: Callable[[], None] | None = None) -> int:
    """Record (or resume) a run in `out`; with `test_split`, score the initial and the final
    skill on that split afterwards (outside the budget) into evaluation.json. `on_ready` runs
    once the input and the directory are accepted, before the run starts."""
    hooks = hooks or TrainHooks()
    # Everything that can be refused is checked before the run directory is touched.
    task = hooks.task if hooks.task is not None else models.load_task(options.task,
                                                                      data_dir=options.data_dir)
    config = build_config(options, task)  # the task's preset is a config layer
    backends = {**(hooks.backends or models.backends(options.target_model, options.optimizer_model)),
                **models.kind_backends(options.task, task)}
    # A local optimizer's window bounds its prompts; the lowered budget is part of the recorded
    # config, so replay and resume rebuild the same prompts without asking the backend again.
    config = fit_to_context(config, context_tokens(backends[Role.OPTIMIZER]))
    options = attrs.evolve(options, method=fit_method(options.method, backends[Role.TARGET]))
    manifest = new_manifest(options, config)
    manifest = attrs.evolve(manifest, target=public_spec(manifest.target),
                            optimizer=public_spec(manifest.optimizer))
    warnings: list[str | None] = []
    if not entry_of(options.method).baseline:
        initial_state(config, task)  # e.g. a budget below one round
        warnings += make_plan(config, task).warnings
    else:
        n_train = len(task.split("train"))
        check_budget(options.method, config.budget_for(n_train), n_train)
    warnings.append(same_batches_warning(manifest.replay_of))
    for warning in warnings:
        if warning is not None:
            console.print(f"[bold yellow]warning[/]: {escape(warning)}")
    run_dir = RunDir.at(out)
    check_out(run_dir.path, "run")
    run_dir.prepare()
    try:
        with RunLock.acquire(run_dir.path):
            if run_dir.holds_evaluation():
                raise StraTuneError(f"--out {run_dir.path}: holds an evaluation "
                                    f"({SCORES}, written by `stratune evaluate --out`); give "
                                    "the run a directory of its own")
            if on_ready is not None:
                on_ready()
            session = _Session(run_dir, config, manifest, console, test_split, hooks)
            return session.run(task, backends, concurrency)
    except OSError as exc:
        raise _storage_error(run_dir, exc) from None
    except sqlite3.Error as exc:
        raise _storage_error(run_dir, exc) from None


def _storage_error(run_dir: RunDir, exc: OSError | sqlite3.Error) -> StraTuneError:
    if isinstance(exc, OSError):
        where = exc.filename or run_dir.path
        what = exc.strerror or str(exc)
    else:
        where, what = run_dir.cache, str(exc)
    return StraTuneError(
        f"{where}: {what}; events and paid calls so far are kept: fix the disk (free space, "
        "make it writable) and run the same command to resume"
    )


@attrs.define
class _Session:
    run_dir: RunDir
    config: Config
    manifest: Manifest
    console: Console
    test_split: str | None
    hooks: TrainHooks
    rewrite_usage: bool = False  # a rerun recovering from a stop before the last seal
    reopened: bool = False  # a rerun of a finished run that diverged and recorded it again

    def run(self, task: Task, backends: dict[Role, Backend], concurrency: int) -> int:
        previous = previous_run(self.run_dir, self.manifest)
        rerun = previous is not None and previous.finished
        before: dict[str, str] = {}
        if rerun:
            # Only files this rerun writes anew may differ from the seal: a stop between the
            # test evaluation and its seal leaves both newer than the seal.
            rewrites = frozenset(seal.TEST_EVALUATION_FILES if self.test_split is not None
                                 else ())
            problem = seal.rerun_problem(self.run_dir, rewrites)
            if problem is not None:
                raise StraTuneError(problem)
            self.rewrite_usage = seal.check(self.run_dir) is not None
            before = seal.fingerprint(self.run_dir)
        llm = CachedLLM.open(self.run_dir.cache, backends=backends, mode="live",
                             concurrency=concurrency, seed=self.config.seed,
                             batch_journal=self.run_dir.path / JOURNAL_NAME,  # batch=on safety
                             gate=self.hooks.gate)
        try:
            code = self._record(task, llm, previous)
        finally:
            llm.close()
        if code == EXIT_OK:
            checkpoint(self.run_dir)
            if previous is not None and previous.finished and previous.seal is None \
                    and not self.reopened:
                self.console.print("[yellow]not sealed[/]: the run had finished without a seal "
                                   "(recorded before seals); a rerun does not seal files it "
                                   "did not write")
            else:
                seal.seal_finished(self.run_dir)
        if rerun:
            changed = seal.rewritten(before, seal.fingerprint(self.run_dir))
            self.console.print("rerun of a finished run: " + (
                f"rewrote {', '.join(changed)}" if changed else
                "every file already held what it recomputed; nothing rewritten"), soft_wrap=True)
        return code

    def _record(self, task: Task, llm: CachedLLM, previous: Manifest | None) -> int:
        rounds = iterate_method(self.manifest.method, self.config, task, llm)
        first = next(rounds)
        finished_before = previous is not None and previous.finished
        if not finished_before:  # a rerun of a finished run keeps it finished unless it diverges
            self.run_dir.write_manifest(self.manifest)
        writer = TraceWriter(self.run_dir)
        progress = TrainProgress(self.console)
        initial = next(e for e in first[1] if isinstance(e, SkillAdded))
        final: tuple[str, str] | None = None
        try:
            with progress:
                for state, events in itertools.chain((first,), rounds):
                    writer.write(events)
                    if finished_before and writer.diverged:
                        self.run_dir.write_manifest(self.manifest)
                        finished_before = False
                        self.reopened = True
                    progress.update(state, events, llm.accounting())
                    for event in events:
                        if isinstance(event, RunFinished):
                            final = (event.final_id, state.text(event.final_id))
                            self.run_dir.write_text(self.run_dir.final_skill, final[1])
                    self.hooks.after_round(state, events, llm.accounting())
        except StopRequested as stop:
            _close(writer)
            self.console.print(f"[yellow]stopped[/]: {escape(str(stop))}")
            return EXIT_STOPPED
        except KeyboardInterrupt:
            _close(writer)
            self.console.print(f"[yellow]stopped[/]: {len(writer.lines)} events kept in "
                               f"{escape(str(self.run_dir.events))}; run the same command again to resume "
                               "from the cache")
            return EXIT_INTERRUPTED
        except LLMError as exc:
            _close(writer)
            self.console.print(f"[red]model call failed[/]: {escape(scrub(str(exc)))}")
            self.console.print("events and paid calls so far are kept; run the same command to "
                               "resume")
            return EXIT_FAILED
        except BaseException:
            _close(writer)
            raise
        writer.finish()
        assert final is not None
        spec = self.manifest.task
        write_learned(spec.skill, spec.skill_parts, self.run_dir.path)  # before it is sealed
        unchanged = previous is not None and previous.finished and not writer.diverged
        self._save_usage(llm, unchanged)
        if not unchanged:  # else the recorded manifest already describes exactly this run
            # finished and sealed in one write: a finished run always carries its seal
            self.run_dir.write_manifest(seal.sealed(self.run_dir, attrs.evolve(
                self.manifest, events=len(writer.lines), event_digest=writer.digest.hexdigest(),
                finished=True, final_id=final[0])))
        self.console.print(writer.report.describe())
        if self.test_split is not None:
            skills = {initial.skill_id: initial.text, final[0]: final[1]}
            try:
                _evaluate_into(self.run_dir, task, llm, self.config, self.test_split, skills,
                               self.console)
            except StopRequested as stop:
                self.console.print(f"[yellow]stopped[/] during the test evaluation: "
                                   f"{escape(str(stop))}")
                return EXIT_STOPPED
            self._save_usage(llm, unchanged)
        return EXIT_OK

    def _save_usage(self, llm: CachedLLM, unchanged: bool) -> None:
        """usage.json is what the session that completed the run paid and read from the cache;
        a rerun of a finished run that paid for nothing leaves the original figures in place."""
        accounting = llm.accounting()
        if unchanged and accounting.total().paid_calls == 0 and self.run_dir.usage.is_file() \
                and not self.rewrite_usage:
            return
        self.run_dir.write_json(self.run_dir.usage, accounting.to_dict())


def _close(writer: TraceWriter) -> None:
    """Close the log after a failure without letting a second failure (a full disk refusing
    the final flush) hide the first."""
    with contextlib.suppress(OSError):
        writer.close()


def _evaluate_into(run_dir: RunDir, task: Task, llm: CachedLLM, config: Config, split: str,
                   skills: dict[str, str], console: Console) -> None:
    scores: dict[str, float] = {}
    solved: dict[str, int] = {}
    n = 0
    counted = Labelled(llm, CallKind.TEST_EVALUATION)
    for skill_id, text in skills.items():
        result = score_with_bar(task, text, counted, config.target_model, console, split=split,
                                label=f"{split} {skill_id[:8]}")
        scores[skill_id], solved[skill_id], n = result.mean, result.solved, result.n
        console.print(f"{split} score of {skill_id[:8]}: {result.mean:.3f} "
                      f"({result.solved}/{result.n} solved)")
    run_dir.write_json(run_dir.evaluation, {"split": split, "n": n, "scores": scores,
                                            "solved": solved})


def replay(path: str, console: Console) -> int:
    """Re-check a recorded directory offline: a training run (`verify.replay`) or an evaluation
    directory written by `stratune evaluate --out` (`evaluation_dir.check`)."""
    if evaluation_dir.is_evaluation_dir(path):
        return evaluation_dir.check(path, console)
    return verify.replay(path, console)


__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_STOPPED", "replay", "train"]
