"""Verified fixes (released code only; `Config.verified_fixes`): the first
`verified_fixes_k` (8) failures shown to the optimizer carry the outcome of its own blind
attempt at them. A verified fix quotes the end of the optimizer's answer, which the task's
scorer accepted; an attempt the scorer did not accept is flagged so that the diagnosis next to
it is read with care. Annotation only: it never blocks a candidate.

The blind attempts are feedback preparation's (`round/prep.py`: the same call, the same
scorer check); this module only picks the failures and words their notes, so the variant needs
`feedback_preparation` on. As in the released code these are optimizer calls and the scorer's
checks run no target model: none of it counts in the budget B. The released code makes one call
per failure with task-specific solve prompts (an image for DocVQA, a fixed system prompt for a
Mind2Web step, a sandboxed program for SpreadsheetBench); here a failure is attempted when
preparation can show it blind (one text request, `feedback_prep.solvable_input`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from stratune_core.prompts.prep_prompt import Fix
from stratune_core.released.events import FixesAnnotated

GIST_LINES, GIST_CHARS = 6, 400


def gist(answer: str) -> str:
    """The end of an answer (its last non-empty lines), where the final answer sits."""
    lines = [line.strip() for line in answer.strip().splitlines() if line.strip()]
    text = " / ".join(lines[-GIST_LINES:])
    return text if len(text) <= GIST_CHARS else "…" + text[-(GIST_CHARS - 1):]


def annotate(
    *,
    round_index: int,
    skill_id: str,
    failure_ids: Sequence[str],
    attempted: Collection[str],
    verified: Mapping[str, str],
    k: int,
) -> tuple[tuple[Fix, ...], tuple[FixesAnnotated, ...]]:
    """The fixes of the first `k` failures (in the order shown) that were attempted blind;
    `verified` maps a failure whose answer the scorer accepted to that answer."""
    fixes = tuple(
        Fix(sample_id=sid, verified=sid in verified, gist=gist(verified.get(sid, "")))
        for sid in failure_ids[:k] if sid in attempted
    )
    if not fixes:
        return (), ()
    event = FixesAnnotated(
        round=round_index, skill_id=skill_id,
        verified=tuple(f.sample_id for f in fixes if f.verified),
        unverified=tuple(f.sample_id for f in fixes if not f.verified),
    )
    return fixes, (event,)
