"""An evaluation directory: skills scored on one split with one target, re-checkable offline.

`stratune evaluate --out DIR` writes it; `stratune replay DIR` recomputes every score from the
cache and fails on the first difference. This is how a transfer result (a skill learned with
one target, scored on another: the paper's RQ4) is committed so anyone can re-check it:

    scores.json        task, split, target model, and per skill: label, content id, mean,
                       solved, every sample's score; which skill is the baseline; its seal
    blobs/<id>.txt.gz  each skill text (as in a run directory)
    cache/             the evaluation's model-call cache

The replay recomputes every score; what it cannot recompute (each skill's label, `n`, which
skill is the baseline) is covered by the seal: the digest of scores.json's other fields, written
with them. Evaluations were not sealed before format 2, and nothing in an evaluation's content
can prove it was written before then, so an unsealed one is never taken as checked: the same
`evaluate` on its directory seals it again from its cache, paying nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import xxhash
from attrs import evolve, field, frozen
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from llm_cache.errors import LLMError
from replay.evaluate.flags import INITIAL
from replay.evaluate.scoring import SplitScore, score_skill
from replay.models import specs as models
from replay.models.redact import scrub
from replay.run.verify import EXIT_OK, failed, replay_llm
from replay.rundir.serde import TaskSpec, TraceError, canonical_json, trace_converter
from replay.rundir.trace import SCORES, RunDir
from stratune_core.evaluation import paired_stats
from stratune_core.records.errors import StraTuneError
from stratune_core.records.ids import text_id

FORMAT = "stratune-evaluation/2"  # sealed
UNSEALED_FORMAT = "stratune-evaluation/1"  # what versions before evaluation seals wrote
SEAL_KEY = "seal"


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
    seal: str | None = None  # the digest of every other field as written (`seal_of`)

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
    data = trace_converter().unstructure(evolve(record, format=FORMAT, seal=None))
    data.pop(SEAL_KEY, None)
    data[SEAL_KEY] = seal_of(data)
    run_dir.write_json(run_dir.path / SCORES, data)


def seal_of(data: dict) -> str:
    """The digest of scores.json's fields but its seal, spelling aside."""
    unsealed = {k: v for k, v in data.items() if k != SEAL_KEY}
    return xxhash.xxh3_128_hexdigest(canonical_json(unsealed).encode("utf-8"))


def seal_problem(path: str | Path, record: EvaluationRecord) -> str | None:
    """None when scores.json matches its seal, else one line naming it and what to do."""
    where = Path(path) / SCORES
    if record.seal is None:
        return (f"{where}: not sealed (written before evaluations were sealed, or its seal was "
                "removed), so nothing vouches for its labels, n and baseline; run the same "
                f"`stratune evaluate` with --out {path} again to seal it (its cache answers "
                "every call)")
    if seal_of(RunDir.at(path).read_json(where)) != record.seal:
        return (f"{where}: edited after the evaluation (a label, n, the baseline or another "
                "field no longer matches its seal); evaluate again under another --out")
    return None


def content_problem(path: str | Path, record: EvaluationRecord,
                    initial_skill: str) -> str | None:
    """What scores.json claims against its own content, whatever its seal: n is every skill's
    number of scores, the baseline is one of its skills, and `initial` is the task's."""
    where = Path(path) / SCORES
    labels = [s.label for s in record.skills]
    if not record.skills:
        return f"{where}: holds no skill; it was edited"
    for skill in record.skills:
        if len(skill.scores) != record.n:
            return (f"{where}: skill {skill.label!r} has {len(skill.scores)} scores but n is "
                    f"{record.n}; it was edited")
    if record.baseline is not None and record.baseline not in labels:
        return f"{where}: the baseline {record.baseline!r} is none of its skills; it was edited"
    if record.baseline == INITIAL and record.skill(INITIAL).skill_id != text_id(initial_skill):
        return (f"{where}: the baseline {INITIAL!r} is not the task's initial skill (its content "
                "id differs); it was edited")
    return None


def read(path: str | Path) -> EvaluationRecord:
    where = Path(path) / SCORES
    data = RunDir.at(path).read_json(where)
    if not isinstance(data, dict) or data.get("format") not in (FORMAT, UNSEALED_FORMAT):
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
    problem = content_problem(path, record, task.info.initial_skill)
    if problem is not None:
        return failed(console, problem)
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
    problem = seal_problem(path, record)
    if problem is not None:
        return failed(console, problem)
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

