"""An evaluation directory: skills scored on one split with one target, re-checkable offline.

`stratune evaluate --out DIR` writes it; `stratune replay DIR` recomputes every score from the
cache and fails on the first difference. This is how a transfer result (a skill learned with
one target, scored on another: the paper's RQ4) is committed so anyone can re-check it:

    scores.json        task, split, target model, and per skill: label, content id, mean,
                       solved, every sample's score; which skill is the baseline
    blobs/<id>.txt.gz  each skill text (as in a run directory)
    cache/             the evaluation's model-call cache
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from attrs import field, frozen
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from llm_cache.errors import LLMError
from replay.evaluate.scoring import SplitScore, score_skill
from replay.models import specs as models
from replay.models.redact import scrub
from replay.run.verify import EXIT_OK, failed, replay_llm
from replay.rundir.serde import TaskSpec, TraceError, trace_converter
from replay.rundir.trace import SCORES, RunDir
from stratune_core.evaluation import paired_stats
from stratune_core.records.errors import StraTuneError
from stratune_core.records.ids import text_id

FORMAT = "stratune-evaluation/1"


@frozen(kw_only=True)
class SkillScore:
    label: str  # the file it came from, or "initial" for the task's initial skill
    skill_id: str
    mean: float
    solved: int
    scores: tuple[float, ...] = field(converter=tuple)


@frozen(kw_only=True)
class EvaluationRecord:
    format: str = FORMAT
    task: TaskSpec
    split: str
    target_model: str
    n: int
    skills: tuple[SkillScore, ...] = field(converter=tuple)
    baseline: str | None = None  # label of the skill the others are compared with

    def skill(self, label: str) -> SkillScore:
        return next(s for s in self.skills if s.label == label)


@frozen(kw_only=True)
class Planned:
    """What an evaluation is of, known before anything is scored: a second `evaluate` on the
    same --out must be this very evaluation again (a rerun) or it is refused, so scores.json
    is never replaced by the scores of other skills."""

    task: TaskSpec
    split: str
    target_model: str
    skills: tuple[tuple[str, str], ...] = field(converter=tuple)  # (label, content id)
    baseline: str | None

    @classmethod
    def of(cls, task: TaskSpec, split: str, target_model: str,
           skills: Sequence[tuple[str, str]], baseline: str | None) -> Planned:
        """skills: (label, text)."""
        return cls(task=task, split=split, target_model=target_model,
                   skills=[(label, text_id(text)) for label, text in skills], baseline=baseline)


def check_same(path: Path, planned: Planned) -> None:
    """Refuse an evaluation directory that holds another evaluation than `planned`."""
    if not (path / SCORES).exists():
        return
    try:
        record = read(path)
    except TraceError as exc:
        raise StraTuneError(f"--out {path}: {exc}; give another directory for the "
                            "evaluation") from None
    held = Planned(task=record.task, split=record.split, target_model=record.target_model,
                   skills=[(s.label, s.skill_id) for s in record.skills],
                   baseline=record.baseline)
    differing = [name for name in ("skills", "baseline", "task", "split", "target_model")
                 if getattr(held, name) != getattr(planned, name)]
    if differing:
        raise StraTuneError(f"--out {path}: holds the evaluation of other "
                            f"{', '.join(differing).replace('_', ' ')} ({SCORES}); a directory "
                            "keeps one evaluation: give this one another --out")


def is_evaluation_dir(path: str | Path) -> bool:
    return (Path(path) / SCORES).is_file() and not RunDir.at(path).exists()


def record_of(task: TaskSpec, split: str, target_model: str,
              results: Sequence[tuple[str, str, SplitScore]],
              baseline: str | None) -> EvaluationRecord:
    """results: (label, skill text, its score) in the order given on the command line."""
    skills = [SkillScore(label=label, skill_id=text_id(text), mean=r.mean, solved=r.solved,
                         scores=r.scores) for label, text, r in results]
    return EvaluationRecord(task=task, split=split, target_model=target_model,
                            n=results[0][2].n, skills=skills, baseline=baseline)


def write(path: str | Path, record: EvaluationRecord, texts: Sequence[str]) -> None:
    run_dir = RunDir.at(path)
    for text in texts:
        run_dir.write_blob(text_id(text), text)
    run_dir.write_json(run_dir.path / SCORES, trace_converter().unstructure(record))


def read(path: str | Path) -> EvaluationRecord:
    where = Path(path) / SCORES
    data = RunDir.at(path).read_json(where)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise TraceError(f"{where}: not an evaluation stratune writes (format {FORMAT!r})")
    try:
        return trace_converter().structure(data, EvaluationRecord)
    except Exception as exc:  # cattrs' grouped errors: the field is in the message
        raise TraceError(f"{where}: malformed ({type(exc).__name__}: {exc}); it was "
                         "edited") from None


def check(path: str | Path, console: Console) -> int:
    """Re-score every skill offline from the directory's cache; exit 0 only when every score
    matches, else print the first difference."""
    record = read(path)
    run_dir = RunDir.at(path)
    task = models.load_task(record.task, toolbox=getattr(record, 'toolbox', None))
    with replay_llm(run_dir) as llm:
        for skill in record.skills:
            text = run_dir.read_blob(skill.skill_id)
            try:
                again = score_skill(task, text, llm, record.target_model, split=record.split)
            except LLMError as exc:
                return failed(console, f"{skill.label}: {scrub(str(exc))}")
            if again.scores != skill.scores:
                pairs = zip(again.scores, skill.scores, strict=False)
                i = next((i for i, (a, b) in enumerate(pairs) if a != b),
                         min(len(again.scores), len(skill.scores)))
                return failed(console, f"{run_dir.path / SCORES}: skill {skill.label!r}, "
                               f"sample {i + 1} of the {record.split} split scores differently "
                               "when recomputed")
            if (again.mean, again.solved) != (skill.mean, skill.solved):
                return failed(console, f"{run_dir.path / SCORES}: skill {skill.label!r}: "
                               "mean or solved count edited")
    console.print(f"[green]replay OK[/]: evaluation of {len(record.skills)} skills on "
                  f"{record.n} {record.split} samples recomputed offline; scores match",
                  soft_wrap=True)
    return EXIT_OK


def table(record: EvaluationRecord, success_threshold: float) -> Table:
    """Each skill's score, and against the baseline its paired gain, wins and losses."""
    out = Table(title=f"{escape(record.task.spec)} {record.split} ({record.n} samples) with "
                      f"{escape(record.target_model)}", title_justify="left")
    for name in ("skill", "score", "solved", "gain", "wins", "losses"):
        out.add_column(name, justify="left" if name == "skill" else "right")
    base = None if record.baseline is None else record.skill(record.baseline)
    for skill in record.skills:
        if base is None:
            extra = ("", "", "")
        elif skill is base:
            extra = ("baseline", "", "")
        else:
            pair = paired_stats(base.scores, skill.scores, success_threshold=success_threshold)
            extra = (f"{pair.gain:+.3f}", str(pair.wins), str(pair.losses))
        out.add_row(escape(skill.label), f"{skill.mean:.3f}", f"{skill.solved}/{record.n}",
                    *extra)
    return out

