"""GEPA's own event, `GepaIteration`, and how the shell shows it (`VIEWS`, on GEPA's entry)."""

from __future__ import annotations

from attrs import field, frozen

from stratune_core.methods.event_view import EventView, Row, score, short_id


@frozen(kw_only=True)
class GepaIteration:
    """GEPA: one iteration of its loop. The parent drawn from the Pareto front, its scores on
    the reflection minibatch, the proposal and its scores on the same minibatch, whether it
    entered the pool (strictly better on the minibatch) with its internal validation score,
    and the pool's Pareto front afterwards (skill ids, in pool order). `detail` says why an
    iteration proposed nothing. Don't subclass this."""

    round: int
    parent_id: str
    minibatch_ids: tuple[str, ...] = field(converter=tuple)
    parent_scores: tuple[float, ...] = field(converter=tuple)
    candidate_id: str | None = None
    candidate_scores: tuple[float, ...] = field(default=(), converter=tuple)
    accepted: bool = False
    validation: float | None = None
    front: tuple[str, ...] = field(default=(), converter=tuple)
    detail: str = ""


def outcome(e: GepaIteration) -> str:
    """One GEPA iteration in words: the parent, the proposal's minibatch sums, what became of it."""
    head = f"iteration {e.round}: parent {short_id(e.parent_id)}"
    if e.candidate_id is None:
        return f"{head}, no proposal" + (f" ({e.detail})" if e.detail else "")
    sums = f"minibatch {sum(e.parent_scores):.2f} -> {sum(e.candidate_scores):.2f}"
    if not e.accepted:
        return f"{head}, {short_id(e.candidate_id)} rejected ({sums})"
    validation = "" if e.validation is None else f", validation {e.validation:.3f}"
    return (f"{head}, {short_id(e.candidate_id)} added to the pool ({sums}{validation}); "
            f"front of {len(e.front)}")


def _row(e: GepaIteration) -> Row | None:
    if e.candidate_id is None:
        return None
    return (f"iteration {e.round}", short_id(e.candidate_id), score(e.validation), "",
            outcome(e).split(", ", 1)[1])


def _curve(e: GepaIteration, best: float) -> tuple[float, bool] | None:
    """GEPA's current skill is the pool's best so far: an accepted proposal moves it only
    when its validation beats that."""
    if not e.accepted or e.validation is None:
        return None
    return max(best, e.validation), e.validation > best


VIEWS = (EventView(event=GepaIteration, line=outcome, row=_row, step=True, curve=_curve),)
