"""The released code's further feedback blocks as prompt parts (built in `round/extras.py`,
`round/residuals.py` and `round/verified_fixes.py`). Each renders only when its block holds something, so a
run with the blocks off (the paper profile) gets the prompts it always got.

Ranks follow `prompts/feedback.py`: the blocks about solved samples go with the successful
trajectories (dropped early), the training-set statistics with the solved examples (first).
"""

from __future__ import annotations

from stratune_core.feedback.execution import Feedback
from stratune_core.prompts.budget import Part
from stratune_core.prompts.prep_prompt import Fix

RANK_STATS, RANK_SOLVED = 0, 1  # = RANK_EXAMPLES, RANK_SUCCESSES of prompt_feedback.py


def pooled_note(fb: Feedback) -> str:
    if not fb.pooled:
        return ""
    return (f"\nThis batch had few failures: the list ends with {len(fb.pooled)} known failures "
            "of the skill on samples of earlier batches.")


def fix_line(fix: Fix) -> str:
    if fix.verified:
        return ("\n  VERIFIED FIX (the optimizer solved this sample blind and the task's scorer "
                f"accepted its answer): {fix.gist}")
    return ("\n  (fix attempt unverified: the scorer did not accept the optimizer's blind answer, "
            "so the diagnosis may be wrong)")


def generation_extras(fb: Feedback) -> list[Part]:
    """Contrast samples, the longitudinal block, trajectories and answer statistics."""
    x = fb.extras
    parts: list[Part] = []
    if x.contrast:
        text = "Solved samples the revision must not break (contrast):"
        if x.long_gold:
            text += (f"\n(The last {x.long_gold} have the longest expected answers: a rule that "
                     "shortens or trims answers must leave them intact; state its boundary "
                     "condition, a blanket rule will be rejected.)")
        parts.append(Part(text=text, items=[f"- {line}" for line in x.contrast],
                          rank=RANK_SOLVED, name="contrast samples"))
    if x.longitudinal is not None:
        t = x.longitudinal
        improved, regressed, persistent = t.counts
        parts.append(Part(
            text=(f"Since the initial skill (the {t.common} samples both ran): {improved} "
                  f"improved, {regressed} regressed, {persistent} still failing "
                  "(initial score -> current score):"),
            items=[*(f"- improved: {x}" for x in t.improved),
                   *(f"- regressed: {x}" for x in t.regressed),
                   *(f"- still failing: {x}" for x in t.persistent)],
            rank=RANK_SOLVED, name="longitudinal examples"))
    if x.trajectories:
        parts.append(Part(
            text="Solved multi-step samples, each gold step marked + (the target got it right) "
                 "or -:",
            items=[f"- {line}" for line in x.trajectories], rank=RANK_SOLVED,
            name="solved trajectories"))
    if x.stats:
        parts.append(Part(
            text="Answer options across the training set (base rates counted over all training "
                 "samples; no single sample's answer is given):",
            items=x.stats, rank=RANK_STATS, name="answer statistics"))
    return parts


GOLD_PAIRS_HEAD = "Solved samples (input -> expected answer), one line each, for reference:"


def selection_material(fb: Feedback) -> list[str]:
    """The digest's lines for the blocks the next candidates will see."""
    x = fb.extras
    lines = []
    if fb.pooled:
        lines.append(f"- known failures from earlier batches added to this round's (the batch "
                     f"had few): {len(fb.pooled)}")
    if x.contrast:
        lines.append(f"- contrast samples (solved; a revision must keep them): {len(x.contrast)}")
    if x.longitudinal is not None:
        i, r, p = x.longitudinal.counts
        lines.append(f"- since the initial skill: {i} improved, {r} regressed, {p} still failing")
    if x.trajectories:
        lines.append(f"- solved multi-step trajectories: {len(x.trajectories)}")
    if x.gold_pairs:
        lines.append("- the solved samples are shown as input -> answer pairs to every form")
    if x.stats:
        lines.append(f"- answer-option statistics of the training set: {len(x.stats)} rows")
    return lines
