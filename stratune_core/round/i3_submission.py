"""I3's submission rule (paper App. A.1): the best draft goes to candidate evaluation; the
runner-up too if its ranking score is no more than `slack` below the current skill's, since the
small shared set is too noisy to discard a near tie. At most `max_submit` are submitted."""

from __future__ import annotations

from collections.abc import Sequence


def pick_submissions(
    scores: Sequence[float], reference_score: float, *, slack: float = 0.02, max_submit: int = 2
) -> tuple[int, ...]:
    """Indexes of the drafts to submit, best first; ties keep draw order."""
    if not scores:
        return ()
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    picked = [order[0]]
    if len(order) > 1 and max_submit > 1 and scores[order[1]] >= reference_score - slack - 1e-12:
        picked.append(order[1])
    return tuple(picked[:max_submit])
