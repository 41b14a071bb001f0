"""A run directory read back as typed records: the manifest, every event, each round's
operator and candidates, the cost, the test scores; `to_records()` flattens them into rows
(plain dicts) for a data frame."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs
from attrs import field, frozen

from replay.rundir.serde import Manifest, event_to_data
from replay.rundir.trace import RunDir
from replay.viewer import build_view
from replay.viewer.model import CandidateView, RoundView, RunView
from stratune_core.evaluation import Outcome
from stratune_core.state.events import Event


@frozen(kw_only=True)
class Cost:
    """What the run's model calls cost and used (usage.json; test-split calls included)."""

    usd: float = 0.0  # paid by the session that completed the run
    paid_calls: int = 0
    cached_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    priced: bool = True  # False: a model had no price, its calls counted as $0

    @classmethod
    def from_usage(cls, usage: Mapping[str, Any] | None) -> Cost:
        total = (usage or {}).get("total") or {}
        tokens = [total.get(k) or {} for k in ("usage", "cached_usage")]
        return cls(usd=float(total.get("cost_usd", 0.0)),
                   paid_calls=int(total.get("paid_calls", 0)),
                   cached_calls=int(total.get("cache_hits", 0)),
                   input_tokens=sum(int(t.get("input_tokens", 0)) for t in tokens),
                   output_tokens=sum(int(t.get("output_tokens", 0)) for t in tokens),
                   priced=bool(total.get("priced", True)))


@frozen(kw_only=True)
class Candidate:
    candidate_id: str
    parent_id: str
    strategy: str
    form: str | None
    screening_gain: float | None
    validation_gain: float | None
    verdict: str | None  # accepted, saved, rejected_screening, ... (None: not decided)

    @classmethod
    def of(cls, view: CandidateView) -> Candidate:
        return cls(candidate_id=view.candidate_id, parent_id=view.parent_id,
                   strategy=view.strategy.value,
                   form=None if view.form is None else view.form.value,
                   screening_gain=_gain(view.screening), validation_gain=_gain(view.validation),
                   verdict=None if view.verdict is None else view.verdict.value)


def _gain(outcome: Outcome | None) -> float | None:
    return None if outcome is None else outcome.stats.gain


@frozen(kw_only=True)
class Round:
    """One round of the trajectory (numbered from 1, as the viewer shows them)."""

    number: int
    epoch: int
    strategy: str | None  # I1, I2, I3; None in a round that chose no operator
    form: str | None
    current_id: str  # the current skill when the round started
    spent: int  # executions spent by the end of the round
    accepted: bool
    candidates: tuple[Candidate, ...] = field(converter=tuple)

    @classmethod
    def of(cls, view: RoundView) -> Round:
        chosen = view.operator
        return cls(number=view.index + 1, epoch=view.epoch,
                   strategy=None if chosen is None else chosen.strategy.value,
                   form=None if chosen is None or chosen.form is None else chosen.form.value,
                   current_id=view.current_id, spent=view.spent_end, accepted=view.accepted,
                   candidates=tuple(Candidate.of(c) for c in view.candidates))


@frozen(kw_only=True)
class Run:
    """A run directory as recorded (finished or not)."""

    path: Path
    manifest: Manifest
    events: tuple[Event, ...] = field(converter=tuple)
    view: RunView
    usage: Mapping[str, Any] | None
    evaluation: Mapping[str, Any] | None

    @property
    def finished(self) -> bool:
        return self.view.finished is not None

    @property
    def rounds(self) -> tuple[Round, ...]:
        return tuple(Round.of(r) for r in self.view.rounds)

    @property
    def final_id(self) -> str | None:
        return None if self.view.finished is None else self.view.finished.final_id

    @property
    def final_skill(self) -> str | None:
        return None if self.final_id is None else self.view.skills[self.final_id]

    @property
    def initial_skill(self) -> str | None:
        started = self.view.started
        return None if started is None else self.view.skills[started.initial_skill_id]

    @property
    def stop_reason(self) -> str | None:
        return None if self.view.finished is None else self.view.finished.reason.value

    @property
    def spent(self) -> int:
        return self.view.spent

    @property
    def budget(self) -> int | None:
        return None if self.view.started is None else self.view.started.budget

    @property
    def cost(self) -> Cost:
        return Cost.from_usage(self.usage)

    @property
    def test_scores(self) -> dict[str, float] | None:
        """Skill id -> mean test score (`--test-eval`, or `optimize(test_eval=True)`)."""
        scores = (self.evaluation or {}).get("scores")
        return None if not isinstance(scores, dict) else {str(k): float(v)
                                                          for k, v in scores.items()}

    def to_records(self, what: Literal["events", "rounds", "candidates"] = "events"
                   ) -> list[dict[str, Any]]:
        """Rows of plain values, one per event (fields flattened with dots: `outcome.gain`),
        per round, or per candidate; `pandas.DataFrame(run.to_records())`."""
        if what == "events":
            return [{"index": i, "type": type(e).__name__,
                     **_flat({k: v for k, v in event_to_data(e).items() if k != "_type"})}
                    for i, e in enumerate(self.events)]
        if what == "rounds":
            return [_fields(r) | {"candidates": len(r.candidates)} for r in self.rounds]
        if what == "candidates":
            return [{"round": r.number, **_fields(c)} for r in self.rounds for c in r.candidates]
        raise ValueError(f"to_records: what={what!r}; use events, rounds or candidates")


def _fields(record: Any) -> dict[str, Any]:
    return attrs.asdict(record, recurse=False)


def _flat(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flat(value, f"{name}."))
        else:
            out[name] = value
    return out


def load_run(path: str | Path) -> Run:
    """Read `path` (a run directory written by `train` or `optimize`); nothing is recomputed
    (`replay` does that)."""
    run_dir = RunDir.at(path)
    manifest = run_dir.read_manifest()
    _, events = run_dir.read_events()
    return Run(path=run_dir.path, manifest=manifest, events=events, view=build_view(events),
               usage=run_dir.read_json(run_dir.usage),
               evaluation=run_dir.read_json(run_dir.evaluation))

