"""Events folded into a `RunView`: rounds with their operator, candidates, stage results and
verdicts. Pure; the renderers read only this."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from attrs import evolve, field, frozen

from stratune_core.evaluation import Outcome
from stratune_core.records.enums import Form, Reason, Stage, Strategy, Verdict
from stratune_core.state.candidate_events import (
    CandidateDecided,
    CandidateGenerated,
    CandidateInvalid,
    CandidateUnaffordable,
    DraftsRanked,
    FinalComparison,
    RefinementAdvanced,
    SkillReplaced,
    StageResult,
)
from stratune_core.state.events import (
    BatchExecuted,
    Event,
    ExecutionsCharged,
    OperatorChosen,
    RoundSkipped,
    RoundStarted,
    RunFinished,
    RunStarted,
    SkillAdded,
)


@frozen(kw_only=True)
class CandidateView:
    candidate_id: str
    parent_id: str
    round: int
    strategy: Strategy
    form: Form | None
    theme: str = ""
    sources: tuple[str, ...] = field(default=(), converter=tuple)
    screening: Outcome | None = None
    validation: Outcome | None = None
    verdict: Verdict | None = None
    reasons: tuple[Reason, ...] = field(default=(), converter=tuple)
    ranking_score: float | None = None


@frozen(kw_only=True)
class RoundView:
    index: int
    epoch: int
    batch_index: int
    current_id: str
    spent_start: int
    spent_end: int
    operator: OperatorChosen | None = None
    skipped: tuple[str, ...] = field(default=(), converter=tuple)
    batch: BatchExecuted | None = None
    candidates: tuple[CandidateView, ...] = field(default=(), converter=tuple)
    invalid: tuple[CandidateInvalid, ...] = field(default=(), converter=tuple)
    ranked: tuple[DraftsRanked, ...] = field(default=(), converter=tuple)
    unaffordable: tuple[CandidateUnaffordable, ...] = field(default=(), converter=tuple)
    replaced: SkillReplaced | None = None
    refinement: RefinementAdvanced | None = None
    events: tuple[Event, ...] = field(default=(), converter=tuple)

    @property
    def accepted(self) -> bool:
        return self.replaced is not None


@frozen(kw_only=True)
class RunView:
    started: RunStarted | None
    skills: Mapping[str, str]
    parents: Mapping[str, str | None]
    rounds: tuple[RoundView, ...] = field(converter=tuple)
    final: tuple[FinalComparison, ...] = field(default=(), converter=tuple)
    finished: RunFinished | None = None

    def round(self, number: int) -> RoundView | None:
        """By 1-based round number, as shown to users."""
        return next((r for r in self.rounds if r.index + 1 == number), None)

    def candidate(self, prefix: str) -> CandidateView | None:
        found = [c for r in self.rounds for c in r.candidates if c.candidate_id.startswith(prefix)]
        return found[0] if len(found) == 1 else None

    def candidate_matches(self, prefix: str) -> tuple[str, ...]:
        return tuple(c.candidate_id for r in self.rounds for c in r.candidates
                     if c.candidate_id.startswith(prefix))

    @property
    def spent(self) -> int:
        if self.finished is not None:
            return self.finished.spent
        return self.rounds[-1].spent_end if self.rounds else 0


def _fold_round(start: RoundStarted, events: list[Event]) -> RoundView:
    view = RoundView(index=start.round, epoch=start.epoch, batch_index=start.batch_index,
                     current_id=start.current_id, spent_start=start.spent, spent_end=start.spent,
                     events=(start, *events))
    candidates: dict[str, CandidateView] = {}
    skipped: list[str] = []
    invalid: list[CandidateInvalid] = []
    ranked: list[DraftsRanked] = []
    unaffordable: list[CandidateUnaffordable] = []
    for e in events:
        if isinstance(e, ExecutionsCharged):
            view = evolve(view, spent_end=e.spent)
        elif isinstance(e, BatchExecuted) and view.batch is None:
            view = evolve(view, batch=e)
        elif isinstance(e, OperatorChosen):
            view = evolve(view, operator=e)
        elif isinstance(e, RoundSkipped):
            skipped.append(e.reason)
        elif isinstance(e, CandidateGenerated):
            candidates[e.candidate_id] = CandidateView(
                candidate_id=e.candidate_id, parent_id=e.parent_id, round=e.round,
                strategy=e.strategy, form=e.form, theme=e.theme, sources=e.sources)
        elif isinstance(e, CandidateInvalid):
            invalid.append(e)
        elif isinstance(e, DraftsRanked):
            ranked.append(e)
            for cid, score in zip(e.candidate_ids, e.scores, strict=False):
                if cid in candidates:
                    candidates[cid] = evolve(candidates[cid], ranking_score=score)
        elif isinstance(e, StageResult) and e.candidate_id in candidates:
            key = "screening" if e.outcome.stage is Stage.SCREENING else "validation"
            candidates[e.candidate_id] = evolve(candidates[e.candidate_id], **{key: e.outcome})
        elif isinstance(e, CandidateUnaffordable):
            unaffordable.append(e)
        elif isinstance(e, CandidateDecided) and e.candidate_id in candidates:
            candidates[e.candidate_id] = evolve(candidates[e.candidate_id], verdict=e.verdict,
                                                reasons=e.reasons)
        elif isinstance(e, SkillReplaced):
            view = evolve(view, replaced=e)
        elif isinstance(e, RefinementAdvanced):
            view = evolve(view, refinement=e)
    return evolve(view, candidates=tuple(candidates.values()), skipped=skipped, invalid=invalid,
                  ranked=ranked, unaffordable=unaffordable)


def build_view(events: Iterable[Event]) -> RunView:
    started: RunStarted | None = None
    finished: RunFinished | None = None
    skills: dict[str, str] = {}
    parents: dict[str, str | None] = {}
    rounds: list[tuple[RoundStarted, list[Event]]] = []
    tail: list[Event] = []
    final: list[FinalComparison] = []
    for e in events:
        if isinstance(e, RunStarted):
            started = e
        elif isinstance(e, SkillAdded):
            skills[e.skill_id] = e.text
            parents[e.skill_id] = e.parent_id
        elif isinstance(e, RoundStarted):
            rounds.append((e, []))
        elif isinstance(e, RunFinished):
            finished = e
        elif isinstance(e, FinalComparison):
            final.append(e)
            tail.append(e)
        elif rounds and getattr(e, "round", None) == rounds[-1][0].round:
            rounds[-1][1].append(e)
        else:
            tail.append(e)
    folded = _settle_late([_fold_round(s, evs) for s, evs in rounds], [
        e for _, evs in rounds for e in evs] + tail)
    return RunView(started=started, skills=skills, parents=parents, rounds=tuple(folded),
                   final=final, finished=finished)


def _settle_late(rounds: list[RoundView], events: list[Event]) -> list[RoundView]:
    """A draft evaluated in a later round than it was written (the released profile's I2
    window) takes its stage results and verdict from there."""
    pending = {c.candidate_id for r in rounds for c in r.candidates if c.verdict is None}
    late: dict[str, dict[str, object]] = {}
    for e in events:
        if isinstance(e, StageResult) and e.candidate_id in pending:
            key = "screening" if e.outcome.stage is Stage.SCREENING else "validation"
            late.setdefault(e.candidate_id, {})[key] = e.outcome
        elif isinstance(e, CandidateDecided) and e.candidate_id in pending:
            late.setdefault(e.candidate_id, {}).update(verdict=e.verdict, reasons=e.reasons)
    if not late:
        return rounds
    return [evolve(r, candidates=tuple(evolve(c, **late.get(c.candidate_id, {}))  # type: ignore[arg-type]
                                       for c in r.candidates)) for r in rounds]
