"""Whether a finished run without a seal can have been written before runs were sealed, judged
by what the replay recomputes, never by the manifest's `format` (one edited field).

Its event log is the proof: `stratune replay` recomputes every line, so a log cannot be made to
look older without failing the replay. The versions from before seals wrote only the events
below, each with only these fields (their shape when sealing came in); every later version
writes at least one event or field that is not here in every run (the charged executions'
`pairs`, the methods' own events, ...). A log with a line outside this table, or that cannot be
read, was written by a version that seals every finished run: a missing seal was taken out.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from replay.rundir.serde import TEXT_BLOB

_TYPE = "_type"


def _fields(*names: str) -> frozenset[str]:
    return frozenset(names)


PRE_SEAL_EVENTS: dict[str, frozenset[str]] = {
    "RunStarted": _fields("task", "n_train", "budget", "reserve", "initial_skill_id",
                          "n_batches"),
    "SkillAdded": _fields("skill_id", TEXT_BLOB, "parent_id"),
    "RoundStarted": _fields("round", "epoch", "batch_index", "current_id", "spent"),
    "ExecutionsCharged": _fields("round", "purpose", "skill_ids", "new", "reused", "spent"),
    "BatchExecuted": _fields("round", "skill_id", "sample_ids", "solved", "mean_score"),
    "OperatorChosen": _fields("round", "strategy", "form", "why", "source", "fallback",
                              "detail"),
    "RoundSkipped": _fields("round", "reason"),
    "FeedbackPrepared": _fields("round", "skill_id", "failures", "checkable", "diagnosed",
                                "verified", "successes", "detail"),
    "CandidateGenerated": _fields("round", "candidate_id", "parent_id", "strategy", "form",
                                  "theme", "draw", "sources"),
    "CandidateInvalid": _fields("round", "strategy", "form", "reason", "detail", "draw"),
    "DraftsRanked": _fields("round", "strategy", "reference_id", "reference_score",
                            "candidate_ids", "scores", "submitted"),
    "StageResult": _fields("round", "candidate_id", "reference_id", "outcome", "sample_ids"),
    "CandidateUnaffordable": _fields("round", "candidate_id", "stage", "cost", "remaining"),
    "CandidateDecided": _fields("round", "candidate_id", "verdict", "reasons"),
    "CandidatePruned": _fields("round", "candidate_id"),
    "SkillReplaced": _fields("round", "previous_id", "current_id"),
    "RefinementAdvanced": _fields("round", "intermediate_id", "steps", "advanced"),
    "FinalComparison": _fields("candidate_id", "selected_id", "selection", "confirmation",
                               "replaced"),
    "RunFinished": _fields("final_id", "reason", "rounds", "spent", "budget"),
    "WarmupRound": _fields("round", "skill_id", "solved_known", "needed", "done"),
    "ResidualsPooled": _fields("round", "skill_id", "batch_failures", "sample_ids"),
    "FeedbackExtended": _fields("round", "skill_id", "contrast", "longitudinal",
                                "trajectories", "gold_pairs", "stats"),
    "StrategiesNarrowed": _fields("round", "offered", "dropped", "remaining"),
    "FixesAnnotated": _fields("round", "skill_id", "verified", "unverified"),
    "WindowSubmitted": _fields("round", "candidate_ids", "scores", "reference_scores",
                               "submitted", "flush"),
    "RefinementKept": _fields("round", "accepted_id", "intermediate_id", "steps"),
    "SmokeFailed": _fields("round", "candidate_id", "sample_ids", "broken", "kept"),
    "FutilityStopped": _fields("round", "candidate_id", "stage", "sample_ids", "gain", "wins",
                               "losses"),
    "ProbationOpened": _fields("round", "candidate_id", "changes", "sample_ids"),
    "CandidateBranched": _fields("round", "candidate_id", "wins", "losses", "win_strata",
                                 "loss_strata"),
    "EarlyStopWaived": _fields("round", "epoch", "i2_round"),
    "SeatRefused": _fields("candidate_id", "rule", "common"),
    "SalvageAttempted": _fields("round", "donor_id", "rescues", "candidate_id"),
}


def _lines(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8") as lines:
        yield from lines


def events_predate_seals(events: Path) -> bool:
    """True only when every line of the log is an event, with its fields, as the versions from
    before seals wrote it (an empty, missing or unreadable log proves nothing: False)."""
    seen = False
    try:
        for line in _lines(events):
            if not line.strip():
                continue
            data = json.loads(line)
            if not isinstance(data, dict):
                return False
            kind = data.get(_TYPE)
            fields = PRE_SEAL_EVENTS.get(kind) if isinstance(kind, str) else None
            if fields is None or not set(data) - {_TYPE} <= fields:
                return False
            seen = True
    except (OSError, UnicodeError, ValueError):
        return False
    return seen
