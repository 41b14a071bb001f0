"""The rounds section: per round the operator and the selector's reason, the feedback and the
failures the optimizer was shown, each candidate with its screening and validation outcomes
(the records as the trace converter writes them), its decision and its diff against its
parent, and every event of the round as the terminal viewer words it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replay.dashboard.diffs import skill_diff
from replay.dashboard.executions import FailureReader
from replay.rundir.serde import event_to_data, trace_converter
from replay.viewer.events_log import event_line
from replay.viewer.method_view import step_rows
from replay.viewer.model import CandidateView, RoundView, RunView
from stratune_core.evaluation import Outcome
from stratune_core.records.enums import Form, Strategy
from stratune_core.state.candidate_events import (
    CandidateDecided,
    CandidateGenerated,
    DraftsRanked,
    StageResult,
)
from stratune_core.state.events import Event, FeedbackPrepared, RoundStarted, SkillAdded

# Events a candidate's own fields already show; any other event naming the candidate (the
# released rules it was checked against, a probation, a branch) is listed with it.
_SHOWN = (CandidateGenerated, StageResult, CandidateDecided, DraftsRanked, SkillAdded)


def operator_label(strategy: Strategy, form: Form | None) -> str:
    return strategy.value + (f"+{form.value}" if form is not None else "")


def outcome(value: Outcome | None) -> dict[str, Any] | None:
    return None if value is None else trace_converter().unstructure(value)


def _candidate(view: RunView, r: RoundView, c: CandidateView) -> dict[str, Any]:
    parent, text = view.skills.get(c.parent_id), view.skills.get(c.candidate_id)
    related = [e for e in r.events if getattr(e, "candidate_id", None) == c.candidate_id
               and not isinstance(e, _SHOWN)]
    return {
        "id": c.candidate_id, "parent": c.parent_id, "operator": operator_label(c.strategy, c.form),
        "theme": c.theme, "sources": list(c.sources), "ranking": c.ranking_score,
        "screening": outcome(c.screening), "validation": outcome(c.validation),
        "verdict": None if c.verdict is None else c.verdict.value,
        "reasons": [reason.value for reason in c.reasons],
        "diff": None if parent is None or text is None else skill_diff(parent, text),
        "text": text,
        "notes": [event_line(e).plain for e in related],
    }


def _feedback(view: RunView, r: RoundView, failures: FailureReader) -> dict[str, Any] | None:
    prepared = [e for e in r.events if isinstance(e, FeedbackPrepared)]
    if r.batch is None and not prepared:
        return None
    shown = None
    if r.batch is not None and r.operator is not None and r.batch.skill_id in view.skills:
        shown = failures.batch(view.skills[r.batch.skill_id], r.batch.skill_id,
                               r.batch.sample_ids)
    return {
        "batch": None if r.batch is None else {
            "skill": r.batch.skill_id, "samples": list(r.batch.sample_ids),
            "solved": r.batch.solved, "mean": r.batch.mean_score},
        "prepared": [event_to_data(e) for e in prepared],
        "failures": shown,
        # the released profile's further blocks of E_t: pooled failures, extra blocks, fixes
        "extras": [event_line(e).plain for e in r.events
                   if type(e).__name__ in ("ResidualsPooled", "FeedbackExtended",
                                           "FixesAnnotated")],
    }


def round_data(view: RunView, r: RoundView, failures: FailureReader) -> dict[str, Any]:
    op = r.operator
    return {
        "number": r.index + 1, "epoch": r.epoch + 1, "batch_index": r.batch_index,
        "current": r.current_id, "spent_start": r.spent_start, "spent_end": r.spent_end,
        "operator": None if op is None else {
            "label": operator_label(op.strategy, op.form), "strategy": op.strategy.value,
            "source": str(op.source), "why": op.why, "fallback": op.fallback,
            "detail": op.detail},
        "skipped": [str(reason) for reason in r.skipped],
        "accepted": r.accepted,
        "feedback": _feedback(view, r, failures),
        "candidates": [_candidate(view, r, c) for c in r.candidates],
        "invalid": [{"operator": operator_label(e.strategy, e.form), "reason": e.reason.value,
                     "detail": e.detail} for e in r.invalid],
        "unaffordable": [event_line(e).plain for e in r.unaffordable],
        "events": [event_line(e).plain for e in r.events if not isinstance(e, RoundStarted)],
    }


def rounds(view: RunView, failures: FailureReader) -> list[dict[str, Any]]:
    return [round_data(view, r, failures) for r in view.rounds]


def method_steps(events: Sequence[Event]) -> list[list[str]]:
    """A baseline's steps, as `stratune view` lists them."""
    return [list(row) for row in step_rows(events)]
