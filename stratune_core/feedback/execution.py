"""Execution feedback E_t: what the current skill gets wrong on the round's batch, and the
solved samples that may serve as grounded worked examples (F2)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs
from attrs import field, frozen

from llm_cache.records import ToolSpec
from stratune_core.budget.ledger import Ledger
from stratune_core.operators.forms import OfferedExample
from stratune_core.records.base import Execution, Sample
from stratune_core.records.task import Task


@frozen(kw_only=True)
class FailureCase:
    sample_id: str
    input: str
    output: str
    expected: str
    summary: str
    score: float


@frozen(kw_only=True)
class Longitudinal:
    """s_t against the initial skill on the samples both ran (released code): how many it
    improved, regressed and still fails, with a few examples of each."""

    common: int
    improved: tuple[str, ...] = field(converter=tuple)  # example lines
    regressed: tuple[str, ...] = field(converter=tuple)
    persistent: tuple[str, ...] = field(converter=tuple)
    counts: tuple[int, int, int]  # improved, regressed, persistent


@frozen(kw_only=True)
class Extras:
    """The released code's further blocks of E_t (`round/extras.py`); empty in the paper."""

    contrast: tuple[str, ...] = field(default=(), converter=tuple)  # solved samples, one line each
    long_gold: int = 0  # how many of `contrast` (the last ones) have the longest gold answers
    longitudinal: Longitudinal | None = None
    trajectories: tuple[str, ...] = field(default=(), converter=tuple)
    gold_pairs: bool = False  # the solved examples are shown whatever the forms
    stats: tuple[str, ...] = field(default=(), converter=tuple)  # answer-option base rates

    def __bool__(self) -> bool:
        return bool(self.contrast or self.longitudinal or self.trajectories or self.gold_pairs
                    or self.stats)


@frozen(kw_only=True)
class Feedback:
    skill_id: str
    batch_ids: tuple[str, ...] = field(converter=tuple)
    failures: tuple[FailureCase, ...] = field(converter=tuple)
    n_solved: int
    mean_score: float
    examples: tuple[OfferedExample, ...] = field(converter=tuple)
    # known failures of the skill outside the batch, added by residual pooling (released code)
    pooled: tuple[str, ...] = field(default=(), converter=tuple)
    extras: Extras = Extras()
    # an agent task's tools: the inventory the optimizer is told (`TaskInfo.tools`)
    tools: tuple[ToolSpec, ...] = field(default=(), converter=tuple)

    def evolve(self, **changes: object) -> Feedback:
        return attrs.evolve(self, **changes)

    def shown_ids(self, *, examples: bool, gold_pairs: bool = True) -> frozenset[str]:
        """Samples the optimizer sees with their expected answers, which candidate evaluation
        must not test on: the batch, pooled failures, and the solved examples when shown (as
        gold pairs too, unless `gold_pairs` is False: the released code's exclusions)."""
        shown = set(self.batch_ids) | set(self.pooled)
        if examples or (gold_pairs and self.extras.gold_pairs):
            shown |= {e.sample_id for e in self.examples}
        return frozenset(shown)


def offered_examples(
    *,
    task: Task,
    skill_id: str,
    batch_ids: Sequence[str],
    failure_ids: Sequence[str],
    ledger: Ledger,
    samples: Mapping[str, Sample],
    max_examples: int,
    train_order: Sequence[str],
) -> tuple[OfferedExample, ...]:
    """Solved samples offered as worked examples (F2): those of the strata the shown failures
    belong to first, then the rest; in each, solved batch samples first, then other training
    samples the skill already solved, in `train_order` (deterministic, and free: the ledger
    knows them). An example of the kind of input the skill fails on shows the intended answer
    where the skill goes wrong; one of a kind it already solves changes nothing. A task without
    strata keeps the plain order."""
    solved_all = ledger.solved_ids(skill_id)
    in_batch = set(batch_ids)
    solved = [sid for sid in batch_ids if sid in solved_all]
    solved += [sid for sid in train_order if sid in solved_all and sid not in in_batch]
    failing = {samples[sid].stratum for sid in failure_ids}
    ordered = ([sid for sid in solved if samples[sid].stratum in failing]
               + [sid for sid in solved if samples[sid].stratum not in failing])
    return tuple(OfferedExample(sample_id=sid, line=example_line(task, samples[sid]))
                 for sid in ordered[:max_examples])


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split()) if "\n" not in text else text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def example_line(task: Task, sample: Sample) -> str:
    """One worked example, rendered so that it can be copied verbatim into a skill."""
    question = " ".join(task.describe(sample).split())
    answer = " ".join(task.expected(sample).split())
    return f"[{sample.id}] {question} -> {answer}"


def failure_case(task: Task, sample: Sample, execution: Execution) -> FailureCase:
    return FailureCase(
        sample_id=execution.sample_id,
        input=clip(task.describe(sample), 600),
        output=clip(execution.output, task.info.output_chars),
        expected=clip(task.expected(sample), 200),
        summary=clip(execution.summary, 200),
        score=execution.score,
    )


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
    """Failures of the batch (in batch order) and solved samples offered as examples
    (`offered_examples`)."""
    execs = [ledger.get(skill_id, sid) for sid in batch_ids]
    if any(e is None for e in execs):
        raise ValueError("build_feedback needs every batch sample executed under the skill")
    failures = [failure_case(task, samples[e.sample_id], e)
                for e in execs if e is not None and not e.solved]
    examples = offered_examples(
        task=task, skill_id=skill_id, batch_ids=batch_ids,
        failure_ids=[f.sample_id for f in failures], ledger=ledger, samples=samples,
        max_examples=max_examples, train_order=train_order,
    )
    scores = [e.score for e in execs if e is not None]
    return Feedback(
        skill_id=skill_id,
        batch_ids=tuple(batch_ids),
        failures=tuple(failures[:max_failures]),
        n_solved=sum(1 for e in execs if e is not None and e.solved),
        mean_score=sum(scores) / len(scores) if scores else 0.0,
        examples=examples,
        tools=task.info.tools,
    )
