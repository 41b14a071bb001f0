"""The execution feedback E_t as prompt parts: in full for generation (failures with their
prepared diagnoses, what worked, solved samples to copy), as a digest for strategy selection
(failure heads, recent evaluation results, what material the next candidates can draw on).

Each list is a `prompt_budget.Part`, ranked by what a prompt gives up first: solved examples,
then successful trajectories, then (in the selection prompt) older history rows and the
intermediate skill's text, then failures beyond the first few.
"""

from __future__ import annotations

from stratune_core.feedback.execution import FailureCase, Feedback, clip
from stratune_core.prompts.budget import KEEP_FAILURES, Part
from stratune_core.prompts.extras import (
    GOLD_PAIRS_HEAD,
    fix_line,
    generation_extras,
    pooled_note,
    selection_material,
)
from stratune_core.prompts.prep_prompt import Preparation
from stratune_core.prompts.tools import tools_part

# Ranks: lower is dropped first. The intermediate skill's text (selection prompt only) goes
# before the failures: the I2 generation prompt shows it whole anyway.
(RANK_EXAMPLES, RANK_SUCCESSES, RANK_FORM_ROWS, RANK_HISTORY, RANK_INTERMEDIATE,
 RANK_FAILURES) = range(6)

PREPARED_NOTE = (
    "Each failure carries a diagnosis written in feedback preparation from its expected answer "
    "and the scorer's account, and the rule it suggests."
)
BLIND_NOTE = (
    "Each failure carries a diagnosis written in feedback preparation. \"verified\" means the "
    "optimizer solved that sample without seeing its expected answer and the task's scorer "
    "accepted the answer."
)


def _batch_line(fb: Feedback) -> str:
    return (
        f"The current skill solved {fb.n_solved} of {len(fb.batch_ids)} samples of this round's "
        f"batch (mean score {fb.mean_score:.3f})."
    )


def failure_item(f: FailureCase, prep: Preparation | None) -> str:
    text = (
        f"- [{f.sample_id}] input: {f.input}\n  target output: {f.output or '(empty)'}\n"
        f"  expected: {f.expected}\n  problem: {f.summary or 'wrong answer'} (score {f.score:.2f})"
    )
    d = prep.diagnosis(f.sample_id) if prep is not None else None
    if d is not None:
        label = " (verified)" if d.verified else ""
        text += f"\n  diagnosis{label}: {d.wrong or '(the optimizer solved it; none given)'}"
        if d.rule:
            text += f"\n  rule the skill lacks: {d.rule}"
    fix = prep.fix(f.sample_id) if prep is not None else None
    if fix is not None:
        text += fix_line(fix)
    return text


def generation_feedback(
    fb: Feedback, prep: Preparation | None, *, with_examples: bool, keep_examples: int
) -> list[Part]:
    parts: list[Part] = tools_part(fb.tools)
    if fb.failures:
        intro = f"## Execution feedback\n{_batch_line(fb)}{pooled_note(fb)}"
        if prep is not None and prep.diagnoses:
            intro += f"\n{BLIND_NOTE if prep.blind else PREPARED_NOTE}"
        parts.append(Part(
            text=f"{intro}\nFailures ({len(fb.failures)}):",
            items=[failure_item(f, prep) for f in fb.failures], keep=KEEP_FAILURES,
            rank=RANK_FAILURES, name="failures",
        ))
        if prep is not None and prep.shared_rule:
            parts.append(Part(text="The rule the failures share, from feedback preparation: "
                                   f"{prep.shared_rule}"))
    else:
        parts.append(Part(
            text=f"## Execution feedback\n{_batch_line(fb)}\nNo failures on this batch."))
    if prep is not None and prep.successes:
        parts.append(Part(
            text="What the target did right on solved samples (keep what drives these):",
            items=[f"- [{s.sample_id}] {s.worked}" for s in prep.successes],
            rank=RANK_SUCCESSES, name="successful trajectories",
        ))
    parts.extend(generation_extras(fb))
    if (with_examples or fb.extras.gold_pairs) and fb.examples:
        parts.append(Part(
            text="Solved samples you may copy verbatim as worked examples (F2), one line each:"
            if with_examples else GOLD_PAIRS_HEAD,
            items=[e.line for e in fb.examples], keep=keep_examples, rank=RANK_EXAMPLES,
            name="solved examples",
        ))
    return parts


def failure_head(f: FailureCase) -> str:
    problem = clip(f.summary or "wrong answer", 160)
    shown = clip(" ".join(f.input.split()), 100)
    return f"- [{f.sample_id}] {problem} (score {f.score:.2f}); input: {shown}"


def selection_feedback(
    fb: Feedback, recent: tuple[str, ...] | None, *, checkable: int | None, blind: bool = False
) -> list[Part]:
    """The digest: failure heads (droppable beyond the first few), the last evaluation
    results (None: the history is withheld), and the material the next candidates can use."""
    head = f"## Execution feedback\n{_batch_line(fb)}{pooled_note(fb)}"
    parts = [Part(
        text=f"{head}\nFailures ({len(fb.failures)}; the scorer's account of each):",
        items=[failure_head(f) for f in fb.failures], keep=KEEP_FAILURES, rank=RANK_FAILURES,
        name="failures",
    )]
    if recent is None:
        results = "- withheld in this run"
    else:
        results = "\n".join(recent) if recent else "- none yet"
    material = [
        f"- solved samples that can be copied as worked examples (F2): {len(fb.examples)}",
        f"- successful trajectories (solved samples of this batch): {fb.n_solved}",
        *selection_material(fb),
    ]
    if checkable is None:
        material.append(
            "- feedback preparation: off (candidates are written from the raw failures)")
    elif blind:
        material.append(
            f"- feedback preparation: before candidates are written the optimizer diagnoses the "
            f"failures; {checkable} of {len(fb.failures)} can be verified by solving them blind "
            "and scoring the answer"
        )
    else:
        material.append(
            "- feedback preparation: before candidates are written the optimizer diagnoses each "
            "failure from its expected answer and the scorer's account"
        )
    parts.append(Part(
        text="Recent evaluation results (newest last):\n" + results
        + "\nMaterial for the next candidates:\n" + "\n".join(material)
    ))
    return parts
