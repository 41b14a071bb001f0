"""Execution feedback E_t: what the current skill gets wrong on the round's batch, and the
solved samples that may serve as grounded worked examples (F2)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from attrs import field, frozen

from stratune_core.forms import OfferedExample
from stratune_core.ledger import Ledger
from stratune_core.records import Sample
from stratune_core.task import Task


@frozen(kw_only=True)
class FailureCase:
    sample_id: str
    input: str
    output: str
    expected: str
    summary: str
    score: float


@frozen(kw_only=True)
class Feedback:
    skill_id: str
    batch_ids: tuple[str, ...] = field(converter=tuple)
    failures: tuple[FailureCase, ...] = field(converter=tuple)
    n_solved: int
    mean_score: float
    examples: tuple[OfferedExample, ...] = field(converter=tuple)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split()) if "\n" not in text else text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def example_line(task: Task, sample: Sample) -> str:
    """One worked example, rendered so that it can be copied verbatim into a skill."""
    question = " ".join(task.describe(sample).split())
    answer = " ".join(task.expected(sample).split())
    return f"[{sample.id}] {question} -> {answer}"


def build_feedback(
    *,
    task: Task,
    skill_id: str,
    batch_ids: Sequence[str],
    ledger: Ledger,
    samples: Mapping[str, Sample],
    max_failures: int,
    max_examples: int,
    train_order: Sequence[str],
) -> Feedback:
    """Failures of the batch (in batch order) and solved samples offered as examples: solved
    batch samples first, then other training samples the skill already solved (ledger order
    follows `train_order`, so the choice is deterministic and costs nothing)."""
    execs = [ledger.get(skill_id, sid) for sid in batch_ids]
    if any(e is None for e in execs):
        raise ValueError("build_feedback needs every batch sample executed under the skill")
    failures = [
        FailureCase(
            sample_id=e.sample_id,
            input=_clip(task.describe(samples[e.sample_id]), 600),
            output=_clip(e.output, 400),
            expected=_clip(task.expected(samples[e.sample_id]), 200),
            summary=_clip(e.summary, 200),
            score=e.score,
        )
        for e in execs
        if e is not None and not e.solved
    ]
    solved_batch = [e.sample_id for e in execs if e is not None and e.solved]
    solved_all = ledger.solved_ids(skill_id)
    in_batch = set(batch_ids)
    others = [sid for sid in train_order if sid in solved_all and sid not in in_batch]
    offered = (solved_batch + others)[:max_examples]
    examples = tuple(
        OfferedExample(sample_id=sid, line=example_line(task, samples[sid])) for sid in offered
    )
    scores = [e.score for e in execs if e is not None]
    return Feedback(
        skill_id=skill_id,
        batch_ids=tuple(batch_ids),
        failures=tuple(failures[:max_failures]),
        n_solved=len(solved_batch),
        mean_score=sum(scores) / len(scores) if scores else 0.0,
        examples=examples,
    )
